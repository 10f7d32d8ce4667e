// Reading, counting and checking the ledger are shared with the long version in bench/, and so is the percentile.
export {
  countSyncs,
  findOverlaps,
  type LedgerLine,
  openSyncs,
  readLedger,
} from '../../bench/scale-ledger.js';
export { percentile } from '../../bench/stats.js';
