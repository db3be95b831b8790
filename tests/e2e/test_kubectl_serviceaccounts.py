"""Service accounts and their tokens through the real kubectl's typed commands (Protobuf, `--api-domain k8s.io`).

`kubectl create sa`, `kubectl get sa`, `kubectl create token` (with
`--duration` and `--audience`), then kubectl itself authenticating with
the token: `auth whoami` names the service account, RBAC decides, and the
token stops working once the account is deleted.
"""

from __future__ import annotations

import json

import jwt

from tests.support.kubectl import Kubectl


async def test_kubectl_creates_a_service_account_and_a_token_that_authenticates_as_it(kubectl: Kubectl):
    await kubectl("create", "serviceaccount", "robot", "-n", "default")
    listed = await kubectl("get", "sa", "-n", "default")
    assert listed.out.split("\n")[0].split() == ["NAME", "SECRETS", "AGE"]
    assert listed.out.split("\n")[1].split()[:2] == ["robot", "0"]
    token = (await kubectl("create", "token", "robot", "-n", "default", "--duration", "15m")).out.strip()
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["sub"] == "system:serviceaccount:default:robot" and claims["exp"] - claims["iat"] == 900
    me = json.loads((await kubectl("auth", "whoami", "-o", "json", "--token", token)).out)
    assert me["status"]["userInfo"]["username"] == "system:serviceaccount:default:robot"
    assert "system:serviceaccounts:default" in me["status"]["userInfo"]["groups"]
    denied = await kubectl("get", "roles", "-n", "default", "--token", token, check=False)
    assert denied.code != 0 and 'cannot list resource "roles"' in denied.err
    await kubectl("create", "role", "reader", "--verb=list", "--resource=roles", "-n", "default")
    await kubectl("create", "rolebinding", "robot-reads", "--role=reader", "--serviceaccount=default:robot",
                  "-n", "default")
    assert (await kubectl("get", "roles", "-n", "default", "--token", token)).code == 0
    for_vault = (await kubectl("create", "token", "robot", "-n", "default", "--audience", "vault")).out.strip()
    assert jwt.decode(for_vault, options={"verify_signature": False})["aud"] == ["vault"]
    refused = await kubectl("get", "roles", "-n", "default", "--token", for_vault, check=False)
    assert refused.code != 0 and "Unauthorized" in refused.err
    await kubectl("delete", "sa", "robot", "-n", "default")
    gone = await kubectl("auth", "whoami", "--token", token, check=False)
    assert gone.code != 0 and "Unauthorized" in gone.err


async def test_kubectl_create_token_refusals_are_kubernetes_messages(kubectl: Kubectl):
    missing = await kubectl("create", "token", "ghost", "-n", "default", check=False)
    assert missing.code != 0 and 'serviceaccounts "ghost" not found' in missing.err
    await kubectl("create", "serviceaccount", "robot", "-n", "default")
    short = await kubectl("create", "token", "robot", "-n", "default", "--duration", "1m", check=False)
    assert short.code != 0 and "may not specify a duration less than 10 minutes" in short.err
