import { esc } from '../../http/html.js';

export { esc, sendPage } from '../../http/html.js';

const CSS = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
main{max-width:26rem;margin:2rem auto;background:#fff;padding:1.5rem;border-radius:8px;box-shadow:0 1px 3px #0002}
h1{font-size:1.3rem;margin-top:0}label{display:block;margin:.8rem 0 .3rem}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.6rem;font-size:1rem;border:1px solid #99a;border-radius:4px}
.check{display:flex;gap:.5rem;align-items:baseline;margin:.4rem 0}.check label{margin:0}
button{padding:.7rem 1.2rem;font-size:1rem;border-radius:4px;border:1px solid #246;background:#246;color:#fff;margin:1rem .5rem 0 0}
button.secondary{background:#fff;color:#246}.error{color:#a00;font-weight:600}ul{padding-left:1.2rem}code{font-size:.85em;color:#556}
.who{font-size:.9rem;color:#445;margin:0 0 1rem;overflow-wrap:anywhere}.who a{white-space:nowrap}.publisher{color:#334}a{color:#246}
fieldset{border:1px solid #dde;border-radius:6px;margin:.6rem 0;padding:.3rem .8rem .5rem}legend{font-weight:600;padding:0 .3rem}
fieldset ul{margin:.3rem 0}.detail{display:block;font-size:.85rem;color:#667}
.asks{margin:.6rem 0 .2rem}.summary{margin:.2rem 0 .6rem;padding-left:1.2rem}.summary li{margin:.2rem 0}
details.permissions{margin:.4rem 0;border:1px solid #dde;border-radius:6px;padding:.4rem .8rem}
details.permissions summary{cursor:pointer;color:#246;font-weight:600;padding:.2rem 0}.hint{margin:.3rem 0;font-size:.9rem;color:#445}
.decide{position:sticky;bottom:0;background:#fff;border-top:1px solid #dde;margin:0 -1.5rem;padding:.5rem 1.5rem .6rem}
.decide .check{margin:.2rem 0;font-size:.9rem}.buttons{display:flex;gap:.5rem}.buttons button{flex:1;margin:.5rem 0 0}
.remember{font-size:.8rem;color:#556;margin:.4rem 0 0}
@media (max-width:480px){main{margin:0;border-radius:0;box-shadow:none;padding:1rem}.decide{margin:0 -1rem;padding:.4rem 1rem .5rem}h1{font-size:1.15rem}}`;

/** A whole page: viewport meta for phones, inline style only (see the CSP in sendPage). */
export function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title>
<style>${CSS}</style></head><body><main>${body}</main></body></html>`;
}
