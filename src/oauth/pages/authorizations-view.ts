import type { Connection } from '../grants/connections.js';
import { esc, layout } from './html.js';
import { groupPermissions, summarisePermissions } from './permission-words.js';
import { permissionSummary } from './pages.js';

/** Extra layout for the list; the page's CSP lets inline style through, like the others. */
const STYLE = `<style>.apps{list-style:none;padding:0;margin:0}.app{border-top:1px solid #dde;padding:1rem 0}
.app h2{font-size:1.1rem;margin:0 0 .2rem;overflow-wrap:anywhere}.since{color:#556;margin:0 0 .5rem;font-size:.95rem}
.perms{margin:.3rem 0}.app button{margin-top:.5rem;width:100%}button.danger{background:#a11;border-color:#a11}
.app .publisher{margin:0 0 .2rem;font-size:.95rem}.app details{margin:.2rem 0}.app summary{cursor:pointer;color:#246}
.done{background:#e7f5ea;border:1px solid #8c8;border-radius:6px;padding:.5rem .8rem;color:#142}</style>`;

/**
 * One line per collection, each permission in words beside its name, as the consent page shows
 * them: "Jobs: Read jobs `jobs.read`, Change jobs `jobs.write`".
 */
function permissionLines(permissions: string[]): string {
  return groupPermissions(permissions)
    .map(
      (g) =>
        `<li><strong>${esc(g.title)}</strong>: ${g.permissions
          .map((p) => `<span class="words">${esc(p.words)}</span> <code>${esc(p.permission)}</code>`)
          .join(', ')}</li>`,
    )
    .join('');
}

const when = (ms: number) => {
  const iso = new Date(ms).toISOString();
  return `<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
};

export function authorizationsPage(opts: {
  action: string;
  csrf: string;
  connections: Connection[];
  error?: string;
  /** The name of the application just revoked: the page confirms it. */
  revoked?: string;
}): string {
  const items = opts.connections
    .map(
      (c) => `<li class="app"><h2>${esc(c.name)}</h2>
<p class="publisher">${c.publisher ? `Run by <strong>${esc(c.publisher)}</strong>` : 'Who runs it is not stated'}</p>
<p class="since">Connected since ${when(c.since)}</p>
<p>It may:</p>${permissionSummary(summarisePermissions(c.permissions))}
<details><summary>The ${c.permissions.length} permission${c.permissions.length === 1 ? '' : 's'}</summary><ul class="perms">${permissionLines(c.permissions)}</ul></details>
<form method="post" action="${esc(opts.action)}"><input type="hidden" name="csrf" value="${esc(opts.csrf)}">
<button type="submit" name="revoke" value="${esc(c.clientId)}" class="danger">Revoke access of ${esc(c.name)}</button></form></li>`,
    )
    .join('\n');
  return layout(
    'Connected applications',
    `${STYLE}<h1>Connected applications</h1>
${opts.error ? `<p class="error" role="alert">${esc(opts.error)}</p>` : ''}
${opts.revoked ? `<p class="done" role="status">Done: <strong>${esc(opts.revoked)}</strong> no longer has access to your account. To connect again it must ask you again.</p>` : ''}
<p>These applications can use your account. Revoking one ends its access at once; to connect again it must ask you again.</p>
${opts.connections.length ? `<ul class="apps">${items}</ul>` : '<p>No application has access to your account.</p>'}`,
  );
}
