# The Node server as an image, for docker-compose.yml (N servers on one PostgreSQL behind
# nginx; docs/scaling.md). Built from this checkout: npm ci, build, then only what runs.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
WORKDIR /app
# bubblewrap: the python environment's sandbox (without it the server refuses python).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/drizzle ./drizzle
COPY --from=build /app/drizzle-pg ./drizzle-pg
COPY --from=build /app/openapi ./openapi
USER node
EXPOSE 8000
CMD ["node", "bin/edgegym.js", "serve", "--host", "0.0.0.0", "--port", "8000"]
