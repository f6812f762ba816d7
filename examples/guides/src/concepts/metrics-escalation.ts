import { countEscalation } from "@rein/server";

// Where an escalation ladder emits interrupt.reminded / interrupt.escalated for a question of
// the "support" app (its root graph):
countEscalation("remind", "support");
countEscalation("escalate", "support");
