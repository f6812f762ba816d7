/**
 * A React page on LangGraph's legacy `useStream` hook (`@langchain/langgraph-sdk/react`), as a
 * LangGraph app writes it, with nothing Rein-specific: the browser test builds it with Vite and
 * drives it in Chromium against Rein's `/langgraph` routes. Settings come from the query string
 * (`api`, `key`, and `thread` to reopen one).
 */
import { createElement as h, useState } from "react";
import { createRoot } from "react-dom/client";
import { useStream } from "@langchain/langgraph-sdk/react";

const params = new URLSearchParams(location.search);

/** The text of a message's content. */
function textOf(content: unknown): string {
  return typeof content === "string" ? content : JSON.stringify(content);
}

/** The chat: messages, the pending approval with its buttons, and a send button. */
function App() {
  const [threadId, setThreadId] = useState<string | null>(params.get("thread"));
  const stream = useStream({
    apiUrl: params.get("api") ?? "",
    apiKey: params.get("key") ?? undefined,
    assistantId: "refund-agent",
    threadId,
    onThreadId: setThreadId,
    messagesKey: "messages",
  });
  const interrupt = stream.interrupt as
    { value?: { action_requests?: { name: string; args: unknown }[] } } | undefined;
  const request = interrupt?.value?.action_requests?.[0];
  return h(
    "main",
    null,
    h("p", { id: "thread" }, threadId ?? ""),
    h("p", { id: "status" }, stream.isLoading ? "loading" : "ready"),
    h(
      "ul",
      { id: "messages" },
      stream.messages.map((m, i) =>
        h("li", { key: m.id ?? i, "data-type": m.type }, textOf(m.content)),
      ),
    ),
    request
      ? h(
          "section",
          { id: "approval" },
          h("p", { id: "action" }, `${request.name} ${JSON.stringify(request.args)}`),
          h(
            "button",
            {
              id: "approve",
              onClick: () =>
                stream.submit(undefined, {
                  command: { resume: { decisions: [{ type: "approve" }] } },
                }),
            },
            "Approve",
          ),
        )
      : null,
    h(
      "button",
      {
        id: "send",
        onClick: () =>
          stream.submit({ messages: [{ type: "human", content: "Refund order A-1" }] }),
      },
      "Send",
    ),
  );
}

createRoot(document.getElementById("root")!).render(h(App));
