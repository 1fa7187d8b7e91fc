import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The console is served by the API under /console (api/http/console.ts):
 * hashed assets there are cached for a year, index.html never.
 * `npm run dev:console` proxies the API for development.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Printed at build time with their gzip sizes; the first page's JavaScript must stay under 300 KB gzip.
    reportCompressedSize: true,
    chunkSizeWarningLimit: 900,
  },
  server: {
    proxy: { '/api': process.env.CONSOLE_API_URL ?? 'http://127.0.0.1:6060' },
  },
});
