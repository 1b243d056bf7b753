"""People and the audit trail, for admins: `/api/admin/users`, `/api/admin/audit`.

    schemas       the user views and bodies (username and password rules from auth.policy)
    errors        user_not_found, user_exists, last_admin
    service       PeopleService: list, create, update (role, password, disabled), delete;
                  the last enabled admin stays; a user's sessions end when they lose access
    router        /api/admin/users
    audit_router  /api/admin/audit (reads audit.AuditLog)

Above `auth` (users, sessions, the bootstrap admin) and `audit` (every change is recorded
in its own unit of work).
"""
