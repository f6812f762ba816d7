/**
 * A page on `@langchain/react` 1.x `useStream`, pointed at `rein serve`'s `/langgraph` prefix:
 * it starts the fan-out graph, lists the pending questions with their namespaces, answers one
 * when its button is clicked, and shows the state's notes. No Rein code on the client side.
 */
import { useStream } from "@langchain/react";
import { createElement as h } from "react";
import { createRoot } from "react-dom/client";

const query = new URLSearchParams(location.search);

function App() {
  const stream = useStream<{ notes: string[] }>({
    apiUrl: `${location.origin}/langgraph`,
    apiKey: query.get("key") ?? "",
    assistantId: "fanout",
    threadId: query.get("thread"),
  });
  const notes = stream.values?.notes ?? [];
  return h(
    "div",
    null,
    h("button", { id: "start", onClick: () => void stream.submit({}) }, "start"),
    h(
      "ul",
      { id: "questions" },
      stream.interrupts.map((interrupt) =>
        h(
          "li",
          {
            key: interrupt.id,
            "data-id": interrupt.id,
            "data-ns": (interrupt.namespace ?? []).join("/"),
          },
          h(
            "button",
            {
              onClick: () =>
                void stream.respond("yes", {
                  interruptId: interrupt.id,
                  namespace: interrupt.namespace ?? [],
                }),
            },
            `answer ${(interrupt.namespace ?? []).join("/")}`,
          ),
        ),
      ),
    ),
    h("pre", { id: "notes" }, notes.join("\n")),
  );
}

const root = document.getElementById("root");
if (root) createRoot(root).render(h(App));
