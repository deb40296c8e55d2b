/**
 * Where `a=b&c=d` text (a query string, a form body) is not valid percent-encoded UTF-8: the first
 * bad parameter, shortened, or undefined when every part decodes. URLSearchParams and the query
 * parser would silently keep bad escapes as text or turn them into U+FFFD.
 */
export function badPercentEncoding(text: string): string | undefined {
  for (const part of text.split('&')) {
    try {
      decodeURIComponent(part.replace(/\+/g, ' '));
    } catch {
      return `in '${part.length > 40 ? `${part.slice(0, 40)}…` : part}' (write '%' as %25; escapes must spell UTF-8)`;
    }
  }
  return undefined;
}
