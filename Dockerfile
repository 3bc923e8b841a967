# flashlog runs its TypeScript sources directly on Node 24 (type stripping); no build step.
FROM node:24-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY streams ./streams
COPY devnet ./devnet
ENV NODE_ENV=production
ENTRYPOINT ["node", "bin/flashlog.js"]
