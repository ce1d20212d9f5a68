from urllib.parse import urlparse

from django.http import HttpResponseRedirect
from django.shortcuts import redirect as django_redirect
from django.utils.http import url_has_allowed_host_and_scheme
from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from flask import Flask, redirect, request, url_for

app = Flask(__name__)
api = FastAPI()
TRUSTED = {"example.com", "www.example.com"}
PAGES = {"home": "/", "account": "/account"}


@app.route("/login")
def login():
    target = request.args.get("next")
    return redirect(target)  # vulnerable


@app.route("/login-fixed")
def login_fixed():
    target = request.args.get("next")
    return redirect(url_for("index"))  # safe


@app.route("/go")
def go():
    url = request.args.get("url", "/")
    if not url.startswith("/"):
        url = "/"
    return redirect(url)  # vulnerable


@app.route("/go-host")
def go_host():
    url = request.args.get("url", "/")
    if urlparse(url).netloc not in TRUSTED:
        return redirect("/")
    return redirect(url)  # safe


@app.route("/page")
def page():
    name = request.cookies.get("page", "home")
    return redirect(PAGES.get(name, "/") + "?from=" + name)  # vulnerable


@app.route("/page-allowed")
def page_allowed():
    name = request.cookies.get("page", "home")
    if name in PAGES:
        return redirect(PAGES[name])  # safe
    return redirect("/")


@app.route("/back", methods=["POST"])
def back():
    ref = request.headers.get("Referer")
    return redirect(ref, code=302)  # vulnerable


@app.route("/back-constant", methods=["POST"])
def back_constant():
    ref = request.headers.get("Referer")
    ref = "/dashboard"
    return redirect(ref, code=302)  # safe


@app.route("/header")
def header():
    resp = app.make_response("moved")
    resp.headers["Location"] = request.args["to"]  # vulnerable
    return resp, 302


@app.route("/header-fixed")
def header_fixed():
    resp = app.make_response("moved")
    resp.headers["Location"] = url_for("index")  # safe
    return resp, 302


def logout(request):
    return HttpResponseRedirect(request.GET.get("next", "/"))  # vulnerable


def logout_checked(request):
    nxt = request.GET.get("next", "/")
    if not url_has_allowed_host_and_scheme(nxt, allowed_hosts={request.get_host()}):
        nxt = "/"
    return HttpResponseRedirect(nxt)  # safe


def jump(request, target):
    return django_redirect(target)  # vulnerable


def jump_fixed(request, target):
    return django_redirect("/jump/" + str(int(target)))  # safe


@api.get("/out")
def out(to: str):
    return RedirectResponse(to)  # vulnerable


@api.get("/out-fixed")
def out_fixed(to: str):
    chosen = {"docs": "/docs", "raw": to}
    return RedirectResponse(chosen["docs"])  # safe


@api.get("/out-check")
def out_check(to: str):
    if to != "/docs":
        return RedirectResponse("/")
    return RedirectResponse(to)  # safe


def build(base, path):
    return base + path


@app.route("/built")
def built():
    return redirect(build("", request.values["path"]))  # vulnerable


@app.route("/built-fixed")
def built_fixed():
    request.values["path"]
    return redirect(build("https://example.com", "/home"))  # safe


@app.route("/chain")
def chain():
    hops = [request.args.get("first", "/"), "/second"]
    return redirect(hops[0])  # vulnerable
