/**
 * A long id as a person needs it: one line, cut with an ellipsis (never broken inside), the full
 * value in a tooltip, and a button that copies it.
 */
import { useState } from "react";

/**
 * An id with its copy button. `label` names it for screen readers (`Thread id`); with `href` the
 * id is a link (a thread id opens its thread) and still copies with the button.
 */
export function Id({ value, label, href }: { value: string; label: string; href?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = () => {
    void navigator.clipboard?.writeText(value).then(
      () => {
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      },
      () => setCopied(false),
    );
  };
  return (
    <span className="id">
      {href ? (
        <a href={href} className="id-text" title={value} data-full={value}>
          {value}
        </a>
      ) : (
        <code className="id-text" title={value} data-full={value}>
          {value}
        </code>
      )}
      <button
        type="button"
        className="copy"
        aria-label={copied ? `${label} copied` : `Copy ${label.toLowerCase()} ${value}`}
        onClick={(event) => {
          event.stopPropagation();
          copy();
        }}
      >
        {copied ? "Copied" : "Copy"}
      </button>
    </span>
  );
}
