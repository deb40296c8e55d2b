import { esc, layout } from './html.js';
import { groupPermissions } from './permission-words.js';

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
  /** The "not you?" link (src/oauth/sign-out.ts). */
  signOutUrl: string;
  permissions: string[];
  choice: boolean;
  error?: string;
  /** A public client (PRODUCT §13): an app that runs on the owner's own device. */
  publicClient?: boolean;
}

/** Who is signed in, who asks, and each permission in words beside its name, grouped by collection. */
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
  const who = opts.owner.name
    ? `<strong>${esc(opts.owner.name)}</strong> (${esc(opts.owner.login)})`
    : `<strong>${esc(opts.owner.login)}</strong>`;
  const publisher = opts.publisher
    ? `<p class="publisher"><strong>${esc(opts.clientName)}</strong> is run by <strong>${esc(opts.publisher)}</strong>.</p>`
    : `<p class="publisher">Who runs <strong>${esc(opts.clientName)}</strong> is not stated: allow it only if you know it.</p>`;
  return layout(
    'Allow access',
    `<p class="who">Signed in as ${who}. <a href="${esc(opts.signOutUrl)}">Not you?</a></p>
<h1>Allow <strong>${esc(opts.clientName)}</strong> to access your account?</h1>
${publisher}
${opts.publicClient ? `<p class="device">${esc(opts.clientName)} is an app that runs on your device (a phone or computer app). It keeps its access on that device.</p>\n` : ''}${opts.error ? `<p class="error" role="alert">${esc(opts.error)}</p>` : ''}
<form method="post" action="${esc(opts.action)}">
<input type="hidden" name="csrf" value="${esc(opts.csrf)}">
<p>It asks for these permissions${opts.choice ? ' (untick any you do not want to give)' : ''}:</p>
${groups}
<div class="check"><input type="checkbox" id="reauthenticate" name="reauthenticate" value="1"><label for="reauthenticate">Ask me to sign in again when this access expires (no lasting access)</label></div>
<button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
  );
}
