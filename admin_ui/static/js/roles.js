// What the signed-in role may do: viewer < operator < admin. The server enforces every rule
// (403 forbidden); the console only hides what the role cannot use.
const RANK = { viewer: 0, operator: 1, admin: 2 };

/** true when `me` (GET /api/auth/me) has at least `need` ("viewer" | "operator" | "admin"). */
export function can(me, need) {
  if (!need) return true;
  if (!me || !(me.role in RANK)) return false;
  return RANK[me.role] >= RANK[need];
}
