import { esc, layout } from './html.js';
import { groupPermissions, summarisePermissions, type PermissionSummary } from './permission-words.js';

export function errorPage(message: string): string {
  return layout(
    'Authorization error',
    `<h1>This sign-in request cannot be completed</h1><p class="error">${esc(message)}</p>
<p>Go back to the application you came from and try again.</p>`,
  );
}

export function loginPage(opts: {
  action: string;
  csrf: string;
  clientName: string;
  error?: string;
  login?: string;
}): string {
  return layout(
    'Sign in',
    `<h1>Sign in</h1><p>to continue to <strong>${esc(opts.clientName)}</strong></p>
${opts.error ? `<p class="error" role="alert">${esc(opts.error)}</p>` : ''}
<form method="post" action="${esc(opts.action)}">
<input type="hidden" name="csrf" value="${esc(opts.csrf)}">
<label for="login">Login</label><input type="text" id="login" name="login" autocomplete="username" autocapitalize="none" required value="${esc(opts.login ?? '')}">
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`,
  );
}

export interface ConsentPageOptions {
  action: string;
  csrf: string;
  clientName: string;
  /** Who runs the client; null when the operator did not say. */
  publisher: string | null;
  owner: { name: string; login: string };
  /** The "not you?" link (src/oauth/pages/sign-out.ts). */
  signOutUrl: string;
  permissions: string[];
  choice: boolean;
  error?: string;
  /** A public client (PRODUCT §13): an app that runs on the owner's own device. */
  publicClient?: boolean;
}

const areas = (n: number) => `${n} area${n === 1 ? '' : 's'}`;

/**
 * A set of permissions in a few lines, area by area: what it may read and change, read only,
 * change only. Shared by the consent and connected-applications pages.
 */
export function permissionSummary(summary: PermissionSummary): string {
  if (summary.everything)
    return `<ul class="summary"><li><strong>Read and change everything</strong> in your account (all ${areas(summary.readAndChange.length + summary.readOnly.length + summary.changeOnly.length)})</li></ul>`;
  const line = (label: string, titles: string[]) =>
    titles.length ? `<li><strong>${label}</strong> (${areas(titles.length)}): ${titles.map(esc).join(', ')}</li>` : '';
  return `<ul class="summary">${line('Read and change', summary.readAndChange)}${line('Read only', summary.readOnly)}${line('Change only', summary.changeOnly)}</ul>`;
}

/**
 * Who is signed in, who asks, and a summary of the permissions by area; each permission in words
 * beside its name, grouped by collection, in a <details> (no script needed): folded, unless the
 * owner may untick some (the checkboxes are then in view, as PRODUCT §1's form has them). The decision
 * stays in a bar pinned to the bottom of the screen, so Allow and Deny are in view however long
 * the list is.
 */
export function consentPage(opts: ConsentPageOptions): string {
  let n = 0;
  const groups = groupPermissions(opts.permissions)
    .map((g) => {
      const items = g.permissions
        .map((p) => {
          const text = `<span class="words">${esc(p.words)}</span> <code>${esc(p.permission)}</code><span class="detail">${esc(p.detail)}</span>`;
          const id = `p${n++}`;
          return opts.choice
            ? `<div class="check"><input type="checkbox" id="${id}" name="permissions" value="${esc(p.permission)}" checked><label for="${id}">${text}</label></div>`
            : `<li>${text}</li>`;
        })
        .join('\n');
      return `<fieldset><legend>${esc(g.title)}</legend>${opts.choice ? items : `<ul>${items}</ul>`}</fieldset>`;
    })
    .join('\n');
  const summary = summarisePermissions(opts.permissions);
  const who = opts.owner.name
    ? `<strong>${esc(opts.owner.name)}</strong> (${esc(opts.owner.login)})`
    : `<strong>${esc(opts.owner.login)}</strong>`;
  const publisher = opts.publisher
    ? `<p class="publisher"><strong>${esc(opts.clientName)}</strong> is run by <strong>${esc(opts.publisher)}</strong>.</p>`
    : `<p class="publisher">Who runs <strong>${esc(opts.clientName)}</strong> is not stated: allow it only if you know it.</p>`;
  const listed = `${summary.count} permission${summary.count === 1 ? '' : 's'}`;
  return layout(
    'Allow access',
    `<p class="who">Signed in as ${who}. <a href="${esc(opts.signOutUrl)}">Not you?</a></p>
<h1>Allow <strong>${esc(opts.clientName)}</strong> to access your account?</h1>
${publisher}
${opts.publicClient ? `<p class="device">${esc(opts.clientName)} is an app that runs on your device (a phone or computer app). It keeps its access on that device.</p>\n` : ''}${opts.error ? `<p class="error" role="alert">${esc(opts.error)}</p>` : ''}
<form method="post" action="${esc(opts.action)}">
<input type="hidden" name="csrf" value="${esc(opts.csrf)}">
<p class="asks">It asks to:</p>
${permissionSummary(summary)}
<details class="permissions"${opts.choice ? ' open' : ''}><summary>${opts.choice ? `Choose among the ${listed}` : `See the ${listed}`}</summary>
${opts.choice ? '<p class="hint">Untick any you do not want to give.</p>\n' : ''}${groups}
</details>
<p class="remember">Once allowed, it is not asked again until the app asks for other permissions or you revoke its access.</p>
<div class="decide">
<div class="check"><input type="checkbox" id="reauthenticate" name="reauthenticate" value="1"><label for="reauthenticate">Ask me to sign in again when this access expires (no lasting access)</label></div>
<div class="buttons"><button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny" class="secondary">Deny</button></div>
</div>
</form>`,
  );
}
