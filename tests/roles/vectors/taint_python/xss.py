import html

from django.http import HttpResponse
from django.utils.safestring import mark_safe
from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from flask import Flask, jsonify, make_response, render_template, render_template_string, request
from markupsafe import Markup, escape

app = Flask(__name__)
api = FastAPI()


@app.route("/hello")
def hello():
    name = request.args.get("name", "")
    return f"<h1>Hello {name}</h1>"  # vulnerable


@app.route("/hello-escaped")
def hello_escaped():
    name = request.args.get("name", "")
    return f"<h1>Hello {escape(name)}</h1>"  # safe


@app.route("/echo", methods=["POST"])
def echo():
    text = request.form["text"]
    response = make_response("<p>" + text + "</p>")  # vulnerable
    return response


@app.route("/echo-json", methods=["POST"])
def echo_json():
    text = request.form["text"]
    return jsonify({"text": text})  # safe


@app.route("/greet")
def greet():
    who = request.cookies.get("who", "")
    return render_template_string("<p>Hi " + who + "</p>")  # vulnerable


@app.route("/greet-template")
def greet_template():
    who = request.cookies.get("who", "")
    return render_template("greet.html", who=who)  # safe


@app.route("/banner")
def banner():
    msg = request.headers.get("X-Banner", "")
    return Markup("<div>%s</div>" % msg)  # vulnerable


@app.route("/banner-escaped")
def banner_escaped():
    msg = request.headers.get("X-Banner", "")
    return Markup("<div>%s</div>" % html.escape(msg))  # safe


@app.route("/page")
def page():
    title = request.values.get("title")
    body = ""
    body += "<title>"
    body += title
    body += "</title>"
    return body  # vulnerable


@app.route("/page-constant")
def page_constant():
    title = request.values.get("title")
    parts = {"shown": "Welcome", "asked": title}
    return "<title>" + parts["shown"] + "</title>"  # safe


def show(request):
    q = request.GET.get("q", "")
    return HttpResponse("<p>You searched for " + q + "</p>")  # vulnerable


def show_escaped(request):
    q = request.GET.get("q", "")
    return HttpResponse("<p>You searched for " + html.escape(q) + "</p>")  # safe


def show_text(request):
    q = request.GET.get("q", "")
    return HttpResponse("You searched for " + q, content_type="text/plain")  # safe


def profile(request, username):
    return HttpResponse(mark_safe("<b>" + username + "</b>"))  # vulnerable


def profile_number(request, username):
    count = len(username)
    return HttpResponse(f"<b>{count}</b>")  # safe


@api.get("/card", response_class=HTMLResponse)
def card(title: str):
    return HTMLResponse("<div class=card>" + title + "</div>")  # vulnerable


@api.get("/card-escaped", response_class=HTMLResponse)
def card_escaped(title: str):
    return HTMLResponse("<div class=card>" + html.escape(title) + "</div>")  # safe


@api.get("/card-json")
def card_json(title: str):
    return {"title": title}  # safe


def wrap(tag, content):
    return f"<{tag}>{content}</{tag}>"


@app.route("/wrapped")
def wrapped():
    return wrap("em", request.args["text"])  # vulnerable


@app.route("/wrapped-dead")
def wrapped_dead():
    text = request.args["text"]
    if 3 > 4:
        return wrap("em", text)  # safe
    return wrap("em", "nothing")


@app.route("/status")
def status():
    code = request.args.get("code", "")
    return "<p>" + code + "</p>", 400  # vulnerable
