import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { fieldServiceWorker } from './field-sw/plugin.js';

const api = 'http://127.0.0.1:8080';

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react(), fieldServiceWorker()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Hashed names under /assets are cached for a year; index.html never is.
    assetsDir: 'assets',
    chunkSizeWarningLimit: 800,
  },
  server: {
    proxy: Object.fromEntries(['/api', '/v1', '/docs', '/openapi.json', '/files', '/respond'].map((path) => [path, api])),
  },
});
