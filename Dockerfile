# Steward: API and sync worker on an embedded SQLite file in the /data volume.
#   docker build -t steward .
#   docker run -d --name steward -v steward-data:/data -p 8080:8080 steward
# docs/operations.md covers the volume, signals, health check, backups and `npm run test:container`,
# which builds and runs this file.

# Build stage: compile the TypeScript and better-sqlite3's native addon. npm fetches a prebuilt
# addon when it can and compiles it from source (python3, make, g++) when it cannot.
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY modules ./modules
COPY ui ./ui
COPY scripts/build-ui.mjs scripts/bundle-cli.mjs ./scripts/
# Then only production dependencies, and of better-sqlite3's build only the addon (its sources and objects are ~13 MB).
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && addon=node_modules/better-sqlite3 \
 && mv $addon/build/Release/better_sqlite3.node /tmp/ \
 && rm -rf $addon/build $addon/deps $addon/src \
 && mkdir -p $addon/build/Release \
 && mv /tmp/better_sqlite3.node $addon/build/Release/

# Runtime stage: the compiled app and its production dependencies, run by the non-root node user.
FROM node:20-bookworm-slim
# STEWARD_SHUTDOWN_GRACE_MS stays under `docker stop`'s 10 s, so a drain ends before the SIGKILL.
ENV NODE_ENV=production \
    STEWARD_HOST=0.0.0.0 \
    STEWARD_PORT=8080 \
    STEWARD_DB=/data/steward.db \
    STEWARD_FILE_ROOT=/data/files \
    STEWARD_RUN_DIR=/data/run \
    STEWARD_SHUTDOWN_GRACE_MS=8000
# tini as PID 1 reaps the orphans of programs the process and job modules start, and passes signals on;
# -s keeps it reaping when something else is PID 1 (docker run --init, a shared process namespace).
COPY --from=build /usr/bin/tini /usr/bin/tini
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY schemas ./schemas
COPY bin ./bin
RUN ln -s /app/bin/steward.js /usr/local/bin/steward \
 && mkdir -p /data \
 && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.STEWARD_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "-s", "--", "node", "dist/src/cli.js"]
CMD ["serve"]
