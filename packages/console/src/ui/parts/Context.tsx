/**
 * Why the agent asks: the payload's context (its stated reason, labelled facts, the conversation
 * before the call, links), and the thread's state on demand, above the arguments.
 */
import { useState } from "react";
import type { ReinClient } from "@rein/client";
import type { ContextMessage, DecisionContext } from "../decision.ts";
import { describeError } from "../errors.ts";

const ROLE: Record<string, string> = { user: "Request", assistant: "Agent", tool: "Tool" };

/** A message that says what it is in a short leading label: `Research finding: …`. */
const LABELLED = /^([A-Z][A-Za-z]*(?: [A-Za-z]+){0,3}): (.+)$/s;

/**
 * Who or what a message is, and its text: a tool's result by the tool, a message that opens with
 * its own label by that label (a finding handed on by another agent), else by its role.
 */
function labelled(m: ContextMessage): { speaker: string; text: string } {
  if (m.role === "tool") return { speaker: m.name ? `Tool ${m.name}` : "Tool", text: m.text };
  const own = m.role === "user" ? LABELLED.exec(m.text) : null;
  if (own?.[1] && own[2]) return { speaker: own[1], text: own[2] };
  return { speaker: ROLE[m.role] ?? m.role, text: m.text };
}

/** The context panel; `description` stands in when the payload has no context. */
export function ContextPanel(props: {
  context: DecisionContext | null;
  description: string;
  client: ReinClient;
  threadId: string;
}) {
  const { context, description } = props;
  return (
    <section className="context" aria-labelledby="context-title">
      <h2 id="context-title">Why the agent asks</h2>
      {context ? (
        <p className="summary">{context.summary}</p>
      ) : (
        <p className="summary">{description || "The payload gives no reason."}</p>
      )}
      {context && context.facts.length > 0 && (
        <dl className="facts">
          {context.facts.map((f) => (
            <div key={f.label}>
              <dt>{f.label}</dt>
              <dd>{f.value}</dd>
            </div>
          ))}
        </dl>
      )}
      {context && context.messages.length > 0 && (
        <>
          <h3 id="conversation-title">What the agent was told, oldest first</h3>
          <ol className="conversation" aria-labelledby="conversation-title">
            {context.messages.map((m, i) => {
              const { speaker, text } = labelled(m);
              return (
                <li key={i} data-role={m.role}>
                  <span className="speaker">{speaker}</span>
                  <p>{text}</p>
                </li>
              );
            })}
          </ol>
        </>
      )}
      {context && context.links.length > 0 && (
        <ul className="links" aria-label="Related">
          {context.links.map((l) => (
            <li key={l.href}>
              <a href={l.href} target="_blank" rel="noreferrer">
                {l.label}
              </a>
            </li>
          ))}
        </ul>
      )}
      <ThreadState client={props.client} threadId={props.threadId} />
    </section>
  );
}

/** The thread's current state (sub-agents' included), read when asked for. */
function ThreadState({ client, threadId }: { client: ReinClient; threadId: string }) {
  const [open, setOpen] = useState(false);
  const [state, setState] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const toggle = () => {
    setOpen(!open);
    if (open || state !== null) return;
    client
      .getState(threadId, { subgraphs: true })
      .then((s) => {
        const children = Object.fromEntries(
          (s.subgraphs ?? []).map((c) => [c.namespace.join(" › "), c.values]),
        );
        setState(JSON.stringify({ ...s.values, "sub-agents": children }, null, 2));
      })
      .catch((e: unknown) => setError(describeError(e)));
  };
  return (
    <div className="thread-state">
      <button type="button" aria-expanded={open} onClick={toggle}>
        {open ? "Hide the thread's state" : "Show the thread's state"}
      </button>
      {open && error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {open && !error && (
        <pre aria-label="Thread state" tabIndex={0}>
          {state ?? "Loading…"}
        </pre>
      )}
    </div>
  );
}
