/** The files of the page, the only ones served: a fixed list, so no path ever reaches the disk. */
export const WEB_ASSETS: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.js.map': 'application/json; charset=utf-8',
};

/**
 * The page loads nothing from anywhere but this server, and talks only to it; inline script
 * and style are refused, so injected markup cannot run.
 */
export const WEB_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');
