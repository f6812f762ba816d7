/**
 * An agent's conversation as a reviewer reads it, oldest first: each turn labelled by who spoke
 * (Human, AI, Tool, System, a steering note with its author), the AI's tool calls with their
 * arguments, and what became of each call (ran, edited by whom and how, declined).
 */
import type { CallView, Turn } from "../conversation.ts";

/** One conversation; `label` names the list for screen readers. */
export function Conversation({ turns, label }: { turns: Turn[]; label: string }) {
  return (
    <ol className="conversation thread-conversation" aria-label={label}>
      {turns.map((turn, i) => (
        <li key={i} data-speaker={turn.speaker}>
          <span className="speaker">{turn.label}</span>
          {turn.text && <p>{turn.text}</p>}
          {turn.calls.map((call) => (
            <ToolCall key={call.id} call={call} />
          ))}
          {turn.note && <p className="turn-note">{turn.note}</p>}
        </li>
      ))}
    </ol>
  );
}

/** A tool call the AI asked for: the action in words, then its arguments. */
function ToolCall({ call }: { call: CallView }) {
  return (
    <div className="tool-call">
      <p className="call-action">Calls {call.action}</p>
      {call.args.length > 0 && (
        <dl className="call-args">
          {call.args.map((arg) => (
            <div key={arg.name}>
              <dt>{arg.name}</dt>
              <dd>{arg.text}</dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  );
}
