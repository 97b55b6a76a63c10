# Vouch's container image: one image runs `serve` (the default), `worker` or any CLI command
# (`docker run IMAGE org create --name Acme --json`). docs/deploy.md says how to run it.
#
# BASE is any Debian (glibc) image with Node 20 and npm on PATH: the official one by default, or a
# locally made one where no registry is reachable (scripts/container-check.sh makes it with
# mmdebstrap and the machine's own node).
ARG BASE=docker.io/library/node:20-bookworm-slim

# Build stage: dev dependencies, the server bundle (dist/, with the migrated embedded-database
# template), the web app (web/dist/) and the hosted verification flow (web/verify/dist/).
FROM ${BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Scripts off: `prepare` would build before the sources are here; no dependency needs its own.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY web ./web
RUN npm run build

# Runtime stage: production dependencies only, from the npm registry, and the built files.
FROM ${BASE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    VOUCH_DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
# Then only what Node loads stays: TensorFlow.js ships each of its packages as a dozen bundles with
# source maps (290 MB), of which Node reads the *.node.js one and the WASM backend's binaries;
# source maps and type declarations are for tools. Of face-api and Human, Node loads the
# *.node-wasm.js bundle (and *.node.js, the package's main, which require.resolve names) and the
# models the engines turn on (face-api: the two detectors and the 68-point landmarks, the
# descriptor being fr_feature.onnx; Human: face, mesh, iris, description, liveness and antispoof,
# with body, hand, object and emotion off): demos (but face-api's six sample photos, which the
# sandbox's test identities are cut from), browser bundles and the other models (about 34 MB) go. npm (and the official image's corepack and yarn) go too: the image installs nothing
# once built.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && find node_modules/@tensorflow/*/dist -mindepth 1 -maxdepth 1 ! -name '*.node.js' ! -name '*.wasm' -exec rm -rf {} + \
 && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete \
 && rm -rf node_modules/@vladmandic/face-api/src \
 && find node_modules/@vladmandic/human/dist node_modules/@vladmandic/face-api/dist -mindepth 1 -maxdepth 1 ! -name '*.node-wasm.js' ! -name '*.node.js' -exec rm -rf {} + \
 && rm -rf node_modules/@vladmandic/human/demo node_modules/@vladmandic/human/assets \
 && find node_modules/@vladmandic/face-api/demo -mindepth 1 ! -name 'sample?.jpg' -exec rm -rf {} + \
 && rm -f node_modules/@vladmandic/human/models/centernet.* node_modules/@vladmandic/human/models/emotion.* \
          node_modules/@vladmandic/human/models/hand* node_modules/@vladmandic/human/models/movenet* \
          node_modules/@vladmandic/face-api/model/age_gender_model* node_modules/@vladmandic/face-api/model/face_expression_model* \
          node_modules/@vladmandic/face-api/model/face_landmark_68_tiny_model* node_modules/@vladmandic/face-api/model/face_recognition_model* \
 && find node_modules/onnxruntime-web/dist -mindepth 1 -maxdepth 1 ! -name 'ort.node.min.js' ! -name 'ort-wasm-simd-threaded.wasm' ! -name 'ort-wasm-simd-threaded.mjs' -exec rm -rf {} + \
 && rm -rf node_modules/onnxruntime-web/lib \
 && npm cache clean --force \
 && rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
           /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-* /root/.npm \
 && groupadd --system --gid 10001 vouch \
 && useradd --system --uid 10001 --gid vouch --home-dir /app --no-create-home --shell /usr/sbin/nologin vouch \
 && mkdir -p /data \
 && chown vouch:vouch /data
COPY models ./models
COPY --from=build /src/dist ./dist
COPY --from=build /src/web/dist ./web/dist
COPY --from=build /src/web/verify/dist ./web/verify/dist
RUN ln -s /app/dist/main.js /usr/local/bin/vouch && chmod 755 /app/dist/main.js
# Not root: uid and gid 10001 (the Kubernetes manifests' runAsUser/runAsGroup).
USER vouch
# The embedded database, its key file (when VOUCH_ENCRYPTION_KEY is not set) and uploaded photos
# (when S3_ENDPOINT is not set) live here.
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "/app/dist/main.js"]
CMD ["serve"]
