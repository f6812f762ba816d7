/**
 * A log as a table (the audit log, webhook subscriptions, deliveries): a label for screen
 * readers, one header a column, the rows given. Its cells carry `data-label` where the narrow
 * layout stacks them.
 */
import type { ReactNode } from "react";

/** The table with `columns` as its headers and `children` as its rows. */
export function LogTable(props: { label: string; columns: string[]; children: ReactNode }) {
  return (
    <table className="audit" aria-label={props.label}>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th key={c} scope="col">
              {c}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  );
}
