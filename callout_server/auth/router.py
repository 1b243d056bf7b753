"""`/api/auth/*`: console login, logout, identity and the user's own password.
Thin: the AuthService does the work.

Login needs a JSON body (FastAPI refuses other content types with 422), so a cross-site HTML
form cannot log a victim's browser into someone else's session ("login CSRF").
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, Field

from callout_server.api.deps import provide
from callout_server.auth.deps import SESSION_COOKIE, Principal, client_ip, require
from callout_server.auth.policy import NewPassword
from callout_server.auth.roles import CONSOLE_USER, SIGNED_IN
from callout_server.auth.service import AuthService
from callout_server.validation import RequestModel

router = APIRouter(prefix="/api/auth", tags=["auth"])

_ERR = {"model": dict[str, Any]}
Auth = Annotated[AuthService, Depends(provide(AuthService))]


class LoginRequest(RequestModel):
    username: str = Field(max_length=256)
    password: str = Field(max_length=4096)


class PasswordChange(RequestModel):
    current_password: str = Field(max_length=4096)
    new_password: NewPassword


class Me(BaseModel):
    username: str
    role: str  # viewer | operator | admin; `admin` for the admin token, `service` for the service token
    via: str
    csrf_token: str | None = None  # console sessions: echo in X-CSRF-Token on writes
    expires_at: datetime | None = None


def _set_session_cookie(response: Response, value: str, max_age: int, secure: bool) -> None:
    # SameSite=Strict: the console is served by this same origin and talks to it with
    # fetch(), which always counts as same-site, so Strict costs nothing and keeps the
    # cookie off every cross-site request, top-level navigations included.
    response.set_cookie(SESSION_COOKIE, value, max_age=max_age, path="/", httponly=True,
                        samesite="strict", secure=secure)


@router.post("/login", status_code=204,
             responses={401: _ERR, 422: _ERR, 429: _ERR, 503: _ERR})
async def login(body: LoginRequest, request: Request, auth: Auth) -> Response:
    new = await auth.login(body.username, body.password, client_ip(request))
    response = Response(status_code=204)
    _set_session_cookie(response, new.session_id, auth.session_ttl_s, auth.cookie_secure)
    return response


@router.post("/logout", status_code=204, responses={503: _ERR})
async def logout(request: Request, auth: Auth) -> Response:
    # No CSRF check: the worst a forged logout can do is sign the user out.
    session_id = request.cookies.get(SESSION_COOKIE)
    if session_id:
        await auth.logout(session_id, client_ip(request))
    response = Response(status_code=204)
    _set_session_cookie(response, "", 0, auth.cookie_secure)
    return response


@router.get("/me", response_model=Me, responses={401: _ERR, 503: _ERR})
async def me(request: Request, principal: Annotated[Principal, Depends(require(SIGNED_IN))]) -> Me:
    session = getattr(request.state, "console_session", None)
    return Me(username=principal.name, role=principal.role, via=principal.via,
              csrf_token=session.csrf_token if session else None,
              expires_at=session.expires_at if session else None)


@router.post("/password", status_code=204,
             responses={401: _ERR, 403: _ERR, 409: _ERR, 422: _ERR, 429: _ERR, 503: _ERR})
async def change_password(body: PasswordChange, request: Request, auth: Auth,
                          who: Annotated[Principal, Depends(require(CONSOLE_USER))]) -> Response:
    await auth.change_password(who.name, request.cookies.get(SESSION_COOKIE, ""),
                               body.current_password, body.new_password, who.ip)
    return Response(status_code=204)
