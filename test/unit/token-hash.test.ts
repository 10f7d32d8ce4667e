import { hashToken } from '../../src/api/auth/tokens-file.js';

/** tokens.json holds `sha256` as operators may make it by hand (`printf %s "$token" | sha256sum`): the standard digest, hex. */
describe('hashToken', () => {
  it('is SHA-256 of the UTF-8 bytes, in hex', () => {
    expect(hashToken('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(hashToken('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    // Two bytes in UTF-8 (é is U+00E9): a Latin-1 encoding would give another digest.
    expect(hashToken('é')).toBe('4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c');
  });
});
