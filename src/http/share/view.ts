import crypto from 'node:crypto';
import type { DocumentView } from '../../domain/billing/documents.js';
import type { BookingView } from '../../collections/jobs/booking.js';
import { formatAmount } from '../../domain/billing/documents.js';
import { MONEY_SCALE, toScaled } from '../../collections/machinery/money.js';
import { esc, PAGE_CSP } from '../html.js';
import { dateFormat, type DateStyle } from '../../time/format.js';

/** The customer's pages (PRODUCT §18): a phone first (375 px wide), readable without script. */
const CSS = `*{box-sizing:border-box}body{font:16px/1.45 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
main{max-width:44rem;margin:1.5rem auto;background:#fff;padding:1.5rem;border-radius:8px;box-shadow:0 1px 3px #0002}
.company{font-weight:700;font-size:1.1rem;margin:0 0 .2rem}h1{font-size:1.35rem;margin:.2rem 0 .4rem}
.meta{color:#445;margin:.1rem 0}.lines{list-style:none;padding:0;margin:1rem 0;border-top:1px solid #dde}
.lines li{display:flex;justify-content:space-between;gap:.8rem;padding:.55rem 0;border-bottom:1px solid #dde}
.lines .what{overflow-wrap:anywhere}.lines .qty{display:block;color:#556;font-size:.9rem}.amt{white-space:nowrap;text-align:right}
.totals{margin:.6rem 0 1rem auto;max-width:20rem}.totals div{display:flex;justify-content:space-between;padding:.15rem 0}
.totals .total{font-weight:700;font-size:1.1rem;border-top:2px solid #1d2330;margin-top:.3rem;padding-top:.4rem}
a{color:#246}.state{padding:.7rem;border-radius:6px;background:#eef3fb;font-weight:600}.error{color:#a00;font-weight:600}
label{display:block;margin:.9rem 0 .3rem;font-weight:600}input[type=text],textarea{width:100%;padding:.6rem;font-size:1rem;border:1px solid #99a;border-radius:4px}
textarea{min-height:4.5rem}canvas{display:block;width:100%;height:160px;border:1px dashed #778;border-radius:6px;background:#fff;touch-action:none}
button{padding:.75rem 1.2rem;font-size:1rem;border-radius:4px;border:1px solid #246;background:#246;color:#fff;margin:.8rem 0 0;width:100%}
button.secondary{background:#fff;color:#246}button.clear{width:auto;padding:.3rem .8rem;font-size:.9rem;margin:.3rem 0 0}
fieldset{border:1px solid #dde;border-radius:6px;margin:1rem 0;padding:.3rem .9rem .9rem}legend{font-weight:700;padding:0 .3rem}
.slots{display:grid;grid-template-columns:repeat(auto-fill,minmax(9.5rem,1fr));gap:.5rem}.slots button{margin:0}.day{margin:1rem 0 .3rem;font-weight:700}
@media (max-width:480px){main{margin:0;border-radius:0;box-shadow:none;padding:1rem}}`;

/** The signature pad: pointer events (touch, pen and mouse) draw; the PNG goes in the hidden input. */
const SCRIPT = `(function(){var c=document.getElementById('signature');if(!c||!c.getContext)return;
var f=c.closest('form'),i=f.querySelector('input[name=signature]'),x=c.getContext('2d'),down=false,drawn=false;
function size(){var r=c.getBoundingClientRect(),p=window.devicePixelRatio||1;c.width=Math.round(r.width*p);c.height=Math.round(r.height*p);
x.setTransform(p,0,0,p,0,0);x.lineWidth=2.5;x.lineCap='round';x.lineJoin='round';x.strokeStyle='#102040';}
size();function pt(e){var r=c.getBoundingClientRect();return[e.clientX-r.left,e.clientY-r.top];}
c.addEventListener('pointerdown',function(e){down=true;c.setPointerCapture(e.pointerId);var p=pt(e);x.beginPath();x.moveTo(p[0],p[1]);e.preventDefault();});
c.addEventListener('pointermove',function(e){if(!down)return;var p=pt(e);x.lineTo(p[0],p[1]);x.stroke();drawn=true;e.preventDefault();});
function up(){if(!down)return;down=false;if(drawn)i.value=c.toDataURL('image/png');}
c.addEventListener('pointerup',up);c.addEventListener('pointercancel',up);
var b=document.getElementById('clear');b.hidden=false;b.addEventListener('click',function(){x.clearRect(0,0,c.width,c.height);drawn=false;i.value='';});})();`;

/** The quote page's policy: its one script by digest, forms posted only back to the server. */
export const SIGN_CSP = `${PAGE_CSP}; script-src 'sha256-${crypto.createHash('sha256').update(SCRIPT).digest('base64')}'; form-action 'self'`;
export const FORM_CSP = `${PAGE_CSP}; form-action 'self'`;

export function page(title: string, body: string, script = false): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><title>${esc(title)}</title>
<style>${CSS}</style></head><body><main>${body}</main>${script ? `<script>${SCRIPT}</script>` : ''}</body></html>`;
}

/** An amount of a line (a JSON decimal) or a total (stored units) with the currency's decimals, as the PDF prints it. */
const money = (v: DocumentView, units: number) => `${formatAmount(units, v.exponent)} ${esc(v.currency)}`;

/** The document itself: the business, number, client, every line, the totals, the PDF. */
export function documentSection(v: DocumentView, title: string, pdfUrl: string): string {
  const lines = v.lines
    .map(
      (l) =>
        `<li><span class="what">${esc(l.description)}<span class="qty">${esc(String(l.quantity))} × ${money(v, toScaled(l.unitPrice, MONEY_SCALE))}${l.taxLabel ? ` · ${esc(l.taxLabel)}` : ''}</span></span><span class="amt">${money(v, toScaled(l.subtotal, MONEY_SCALE))}</span></li>`,
    )
    .join('');
  const dates = v.dates.map(([k, d]) => `<p class="meta">${esc(k)}: ${esc(d)}</p>`).join('');
  const extra = (v.extra ?? [])
    .map(([k, n]) => `<div><span>${esc(k)}</span><span>${money(v, n)}</span></div>`)
    .join('');
  return `<p class="company">${esc(v.seller.company)}</p>
<h1>${esc(title)} ${esc(v.number ?? '')}</h1>
<p class="meta">For ${esc(v.client.company ?? v.client.name)}${v.client.company ? ` (${esc(v.client.name)})` : ''}</p>
${v.job ? `<p class="meta">${esc(v.job.title)}</p>` : ''}${dates}
<ul class="lines">${lines}</ul>
<div class="totals"><div><span>Subtotal</span><span>${money(v, v.subtotal)}</span></div>
<div><span>Tax</span><span>${money(v, v.taxTotal)}</span></div>
<div class="total"><span>Total</span><span>${money(v, v.total)}</span></div>${extra}</div>
${v.notes ? `<p>${esc(v.notes)}</p>` : ''}<p><a href="${esc(pdfUrl)}">Download the PDF</a></p>`;
}

/** A sent quote's form: name, signature pad, accept; or a reason and decline. */
export function decisionForm(action: string, csrf: string, version: number, error?: string): string {
  return `<form method="post" action="${esc(action)}">
${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}<input type="hidden" name="csrf" value="${esc(csrf)}">
<input type="hidden" name="version" value="${version}">
<fieldset><legend>Accept this quote</legend>
<label for="signerName">Your name</label><input type="text" id="signerName" name="signerName" maxlength="200" autocomplete="name" required>
<label for="signature">Your signature</label><canvas id="signature" aria-label="Draw your signature here"></canvas>
<input type="hidden" name="signature" value=""><button type="button" id="clear" class="clear secondary" hidden>Clear</button>
<button type="submit" name="decision" value="accept">Accept and sign</button></fieldset>
<fieldset><legend>Or decline it</legend>
<label for="reason">Reason (optional)</label><textarea id="reason" name="reason" maxlength="2000"></textarea>
<button type="submit" name="decision" value="decline" class="secondary" formnovalidate>Decline</button></fieldset>
</form>`;
}

export const notFoundPage = (): string =>
  page(
    'Link not found',
    '<h1>This link is not valid</h1><p>It may have ended or been replaced. Ask the sender for a new one.</p>',
  );

export const messagePage = (title: string, message: string, back?: string): string =>
  page(
    title,
    `<h1>${esc(title)}</h1><p class="error" role="alert">${esc(message)}</p>${back ? `<p><a href="${esc(back)}">Back to the page</a></p>` : ''}`,
  );

/** A booking page's times, in the account's time zone. */
const DAY: DateStyle = { weekday: 'long', day: 'numeric', month: 'long' };
const TIME: DateStyle = { hour: '2-digit', minute: '2-digit' };
const ZONED_TIME: DateStyle = { ...TIME, timeZoneName: 'short' };
const dayOf = (ms: number, timeZone: string) => dateFormat('en-GB', timeZone, DAY).format(ms);
const timeOf = (ms: number, timeZone: string, zoneName = false) =>
  dateFormat('en-GB', timeZone, zoneName ? ZONED_TIME : TIME).format(ms);

/** A window as people read it: `Monday 1 April, 09:00–11:00 BST`. */
export const windowText = (start: number, end: number, timeZone: string): string =>
  `${dayOf(start, timeZone)}, ${timeOf(start, timeZone)}–${timeOf(end, timeZone, true)}`;

function bookingTop(v: BookingView): string {
  return `<p class="company">${esc(v.company)}</p>\n<h1>Book a visit</h1>\n<p class="meta">${esc(v.title)}</p>`;
}

/**
 * A job's booking page: one `button[name=slot][value=<arrivalWindowStart>|<user id>]` per slot,
 * grouped by the account's local day, in a form with the link's CSRF token; or why nothing is offered.
 */
export function bookingSection(v: BookingView, action: string, csrf: string, error?: string): string {
  const alert = error ? `<p class="error" role="alert">${esc(error)}</p>` : '';
  if (v.none) return `${bookingTop(v)}${alert}<p class="state">${esc(v.none)}</p>`;
  let day = '';
  const buttons: string[] = [];
  for (const o of v.offers) {
    const d = dayOf(o.start, v.timeZone);
    if (d !== day) {
      if (day) buttons.push('</div>');
      buttons.push(`<p class="day">${esc(d)}</p><div class="slots">`);
      day = d;
    }
    const value = `${new Date(o.start).toISOString()}|${o.userId}`;
    const label = `${timeOf(o.start, v.timeZone)}–${timeOf(o.end, v.timeZone)}${o.firstName ? ` · ${o.firstName}` : ''}`;
    buttons.push(`<button type="submit" name="slot" value="${esc(value)}">${esc(label)}</button>`);
  }
  buttons.push('</div>');
  return `${bookingTop(v)}
<form method="post" action="${esc(action)}">${alert}<input type="hidden" name="csrf" value="${esc(csrf)}">
<p>Choose when we may arrive (times in ${esc(v.timeZone.replace(/_/g, ' '))}): we arrive within the window you choose.</p>
${buttons.join('\n')}
</form>`;
}

/** The confirmation after booking: the window, in the account's time zone. */
export const bookedSection = (v: BookingView, start: number, end: number): string =>
  `${bookingTop(v)}<p class="state">You are booked: we will arrive ${esc(windowText(start, end, v.timeZone))}.</p>`;
