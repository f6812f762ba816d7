/**
 * A route as data: the definition lives with the server's ground files (`route-spec.ts`), where
 * the context and the OpenAPI document read it too; the route files import it from here.
 */
export type * from "../route-spec.ts";
