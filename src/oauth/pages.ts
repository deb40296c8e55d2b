import { esc, layout } from './html.js';

/** Human wording for `<collection>.read|write`. */
const describe = (p: string): string => {
  const [collection, access] = p.split('.');
  return `${access === 'write' ? 'Create, change and delete' : 'Read'} ${collection}`;
};

export function errorPage(message: string): string {
  return layout('Authorization error', `<h1>This sign-in request cannot be completed</h1><p class="error">${esc(message)}</p>
<p>Go back to the application you came from and try again.</p>`);
}

export function loginPage(opts: { action: string; csrf: string; clientName: string; error?: string; login?: string }): string {
  return layout('Sign in', `<h1>Sign in</h1><p>to continue to <strong>${esc(opts.clientName)}</strong></p>
${opts.error ? `<p class="error" role="alert">${esc(opts.error)}</p>` : ''}
<form method="post" action="${esc(opts.action)}">
<input type="hidden" name="csrf" value="${esc(opts.csrf)}">
<label for="login">Login</label><input type="text" id="login" name="login" autocomplete="username" autocapitalize="none" required value="${esc(opts.login ?? '')}">
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`);
}

export function consentPage(opts: { action: string; csrf: string; clientName: string; permissions: string[]; choice: boolean; error?: string }): string {
  const items = opts.permissions.map((p, i) => opts.choice
    ? `<div class="check"><input type="checkbox" id="p${i}" name="permissions" value="${esc(p)}" checked><label for="p${i}">${esc(describe(p))} <code>${esc(p)}</code></label></div>`
    : `<li>${esc(describe(p))} <code>${esc(p)}</code></li>`).join('\n');
  return layout('Allow access', `<h1>Allow <strong>${esc(opts.clientName)}</strong> to access your account?</h1>
${opts.error ? `<p class="error" role="alert">${esc(opts.error)}</p>` : ''}
<form method="post" action="${esc(opts.action)}">
<input type="hidden" name="csrf" value="${esc(opts.csrf)}">
<p>It asks for these permissions${opts.choice ? ' (untick any you do not want to give)' : ''}:</p>
${opts.choice ? items : `<ul>${items}</ul>`}
<div class="check"><input type="checkbox" id="reauthenticate" name="reauthenticate" value="1"><label for="reauthenticate">Ask me to sign in again when this access expires (no lasting access)</label></div>
<button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`);
}
