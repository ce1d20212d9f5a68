import ldap
from django.http import JsonResponse
from fastapi import FastAPI
from flask import Flask, jsonify, request
from ldap3 import Connection
from ldap3.utils.conv import escape_filter_chars
from ldap.filter import escape_filter_chars as escape_legacy

app = Flask(__name__)
api = FastAPI()
conn = Connection("ldap://directory", auto_bind=True)
legacy = ldap.initialize("ldap://directory")
BASE = "ou=people,dc=example,dc=com"


@app.route("/find")
def find():
    uid = request.args.get("uid")
    conn.search(BASE, "(uid=" + uid + ")")  # vulnerable
    return jsonify(len(conn.entries))


@app.route("/find-escaped")
def find_escaped():
    uid = request.args.get("uid")
    conn.search(BASE, "(uid=" + escape_filter_chars(uid) + ")")  # safe
    return jsonify(len(conn.entries))


@app.route("/mail", methods=["POST"])
def mail():
    address = request.form["mail"]
    search_filter = f"(&(objectClass=person)(mail={address}))"
    conn.search(BASE, search_filter, attributes=["cn"])  # vulnerable
    return jsonify(len(conn.entries))


@app.route("/mail-checked", methods=["POST"])
def mail_checked():
    address = request.form["mail"]
    if not address.isalnum():
        return jsonify(0)
    search_filter = f"(&(objectClass=person)(mail={address}))"
    conn.search(BASE, search_filter, attributes=["cn"])  # safe
    return jsonify(len(conn.entries))


@app.route("/group")
def group():
    name = request.cookies.get("group", "")
    results = legacy.search_s(BASE, ldap.SCOPE_SUBTREE, "(cn=%s)" % name)  # vulnerable
    return jsonify(len(results))


@app.route("/group-escaped")
def group_escaped():
    name = request.cookies.get("group", "")
    results = legacy.search_s(BASE, ldap.SCOPE_SUBTREE, "(cn=%s)" % escape_legacy(name))  # safe
    return jsonify(len(results))


@app.route("/dn")
def dn():
    who = request.headers.get("X-User")
    conn.delete("uid=" + who + "," + BASE)  # vulnerable
    return jsonify(True)


@app.route("/dn-constant")
def dn_constant():
    who = request.headers.get("X-User")
    choice = ["uid=guest", who]
    conn.delete(choice[0] + "," + BASE)  # safe
    return jsonify(True)


def member_filter(value):
    return "(memberUid=" + value + ")"


@app.route("/members")
def members():
    conn.search(BASE, member_filter(request.values["m"]))  # vulnerable
    return jsonify(len(conn.entries))


@app.route("/members-fixed")
def members_fixed():
    request.values["m"]
    conn.search(BASE, member_filter("nobody"))  # safe
    return jsonify(len(conn.entries))


def lookup(request):
    user = request.GET["user"]
    conn.search(BASE, "(sAMAccountName=" + user + ")")  # vulnerable
    return JsonResponse({"n": len(conn.entries)})


def lookup_dead(request):
    user = request.GET["user"]
    flag = 0
    if flag:
        conn.search(BASE, "(sAMAccountName=" + user + ")")  # safe
    return JsonResponse({"n": 0})


def by_id(request, uid):
    conn.search(BASE, "(uidNumber=" + uid + ")")  # vulnerable
    return JsonResponse({"n": len(conn.entries)})


def by_id_int(request, uid):
    conn.search(BASE, "(uidNumber=" + str(int(uid)) + ")")  # safe
    return JsonResponse({"n": len(conn.entries)})


@api.get("/people")
def people(cn: str):
    conn.search(BASE, f"(cn={cn})")  # vulnerable
    return {"n": len(conn.entries)}


@api.get("/people-escaped")
def people_escaped(cn: str):
    conn.search(BASE, f"(cn={escape_filter_chars(cn)})")  # safe
    return {"n": len(conn.entries)}


@api.get("/people-allowed")
def people_allowed(cn: str):
    if cn not in ("alice", "bob"):
        return {"n": 0}
    conn.search(BASE, f"(cn={cn})")  # safe
    return {"n": len(conn.entries)}


@api.get("/owner")
def owner(ou: str):
    legacy.search_s("ou=" + ou + ",dc=example,dc=com", ldap.SCOPE_BASE)  # vulnerable
    return {}


@api.get("/owner-escaped")
def owner_escaped(ou: str):
    from ldap.dn import escape_dn_chars

    legacy.search_s("ou=" + escape_dn_chars(ou) + ",dc=example,dc=com", ldap.SCOPE_BASE)  # safe
    return {}


@app.route("/modify", methods=["POST"])
def modify():
    entry = request.form["dn"]
    legacy.modify_s(entry, [(ldap.MOD_REPLACE, "description", [b"x"])])  # vulnerable
    return jsonify(True)
