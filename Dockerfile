# syntax=docker/dockerfile:1
# Build stage: compile TypeScript and better-sqlite3's native addon.
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY modules ./modules
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

# Runtime stage: the compiled app, production dependencies, a non-root user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    STEWARD_HOST=0.0.0.0 \
    STEWARD_PORT=8080 \
    STEWARD_DB=/data/steward.db \
    STEWARD_FILE_ROOT=/data/files
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY schemas ./schemas
COPY bin ./bin
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:8080/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/src/cli.js"]
CMD ["serve"]
