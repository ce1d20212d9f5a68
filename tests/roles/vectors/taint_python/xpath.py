import xml.etree.ElementTree as ET

import elementpath
from django.http import JsonResponse
from fastapi import FastAPI
from flask import Flask, jsonify, request
from lxml import etree

app = Flask(__name__)
api = FastAPI()
TREE = etree.parse("users.xml")
ROOT = ET.parse("users.xml").getroot()


@app.route("/user")
def user():
    name = request.args.get("name")
    nodes = TREE.xpath("//user[@name='" + name + "']")  # vulnerable
    return jsonify(len(nodes))


@app.route("/user-variable")
def user_variable():
    name = request.args.get("name")
    nodes = TREE.xpath("//user[@name=$name]", name=name)  # safe
    return jsonify(len(nodes))


@app.route("/email", methods=["POST"])
def email():
    mail = request.form["mail"]
    query = f"//user[email/text()='{mail}']/@id"
    return jsonify(TREE.xpath(query))  # vulnerable


@app.route("/email-checked", methods=["POST"])
def email_checked():
    mail = request.form["mail"]
    if not mail.isalnum():
        return jsonify([])
    query = f"//user[email/text()='{mail}']/@id"
    return jsonify(TREE.xpath(query))  # safe


@app.route("/compiled")
def compiled():
    role = request.cookies.get("role", "")
    finder = etree.XPath("//user[@role='%s']" % role)  # vulnerable
    return jsonify(len(finder(TREE)))


@app.route("/compiled-constant")
def compiled_constant():
    role = request.cookies.get("role", "")
    role = "reader"
    finder = etree.XPath("//user[@role='%s']" % role)  # safe
    return jsonify(len(finder(TREE)))


@app.route("/et")
def et_find():
    city = request.headers.get("X-City")
    found = ROOT.findall(".//user[city='" + city + "']")  # vulnerable
    return jsonify(len(found))


@app.route("/et-fixed")
def et_fixed():
    city = request.headers.get("X-City")
    cities = {"asked": city, "home": "Lyon"}
    found = ROOT.findall(".//user[city='" + cities["home"] + "']")  # safe
    return jsonify(len(found))


@app.route("/ep")
def ep():
    tag = request.values["tag"]
    return jsonify(len(elementpath.select(ROOT, "//" + tag)))  # vulnerable


@app.route("/ep-allowed")
def ep_allowed():
    tag = request.values["tag"]
    if tag not in ("user", "group"):
        tag = "user"
    return jsonify(len(elementpath.select(ROOT, "//" + tag)))  # safe


def by_name(request):
    name = request.GET["name"]
    return JsonResponse({"n": len(TREE.xpath("//user[name='%s']" % name))})  # vulnerable


def by_name_dead(request):
    name = request.GET["name"]
    if 2 + 2 == 5:
        return JsonResponse({"n": len(TREE.xpath("//user[name='%s']" % name))})  # safe
    return JsonResponse({"n": 0})


def by_id(request, ident):
    return JsonResponse({"n": len(TREE.xpath("//user[@id=" + ident + "]"))})  # vulnerable


def by_id_int(request, ident):
    return JsonResponse({"n": len(TREE.xpath("//user[@id=" + str(int(ident)) + "]"))})  # safe


@api.get("/books")
def books(author: str):
    return {"n": len(TREE.xpath(f"//book[author='{author}']"))}  # vulnerable


@api.get("/books-year")
def books_year(year: int):
    return {"n": len(TREE.xpath(f"//book[year={year}]"))}  # safe


def predicate(field, value):
    return "//item[" + field + "='" + value + "']"


@api.get("/items")
def items(value: str):
    return {"n": len(TREE.xpath(predicate("name", value)))}  # vulnerable


@api.get("/items-fixed")
def items_fixed(value: str):
    return {"n": len(TREE.xpath(predicate("name", "all")))}  # safe


@api.get("/text")
def text(path: str):
    return {"t": ROOT.findtext(path)}  # vulnerable


@api.get("/text-fixed")
def text_fixed(path: str):
    shown = "./title" if path else "./title"
    return {"t": ROOT.findtext(shown)}  # safe
