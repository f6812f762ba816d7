/**
 * The HTML pages of decision links: the confirmation a `GET` shows (a form that `POST`s), the
 * outcome of the `POST`, and each refusal with why and a link to the console. Self-contained
 * (inline style, no script), so it renders in any browser and leaks nothing to third parties.
 */

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.3rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dt{color:#555}
button{font-size:1rem;padding:.6rem 1.4rem;border:0;border-radius:.3rem;color:#fff;cursor:pointer}
.approve{background:#1f7a3a}.reject{background:#a32020}.note{color:#555;font-size:.9rem}`;

/** A whole page: title, body HTML (already escaped), and the console link. */
export function page(title: string, bodyHtml: string, consoleUrl: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${bodyHtml}
<p><a href="${escapeHtml(consoleUrl)}">Open the approval console</a></p>
</body></html>`;
}

/** A definition list of label → text rows (escaped). */
export function facts(rows: [string, string][]): string {
  return `<dl>${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join("")}</dl>`;
}

/** The confirmation form: it posts to the link's own URL (the token is in the path). */
export function confirmForm(decision: "approve" | "reject", action: string): string {
  const label = decision === "approve" ? "Approve" : "Reject";
  return `<form method="post" action="${escapeHtml(action)}">
<button class="${decision}" type="submit">${label}</button></form>
<p class="note">Nothing happens until you press ${label}. The link works once.</p>`;
}
