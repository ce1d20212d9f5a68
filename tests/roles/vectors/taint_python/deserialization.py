import base64
import marshal
import pickle

import jsonpickle
import yaml
from django.http import HttpResponse, JsonResponse
from fastapi import FastAPI
from flask import Flask, jsonify, request

app = Flask(__name__)
api = FastAPI()
DEFAULTS = pickle.dumps({"theme": "light"})


@app.route("/restore", methods=["POST"])
def restore():
    blob = base64.b64decode(request.form["state"])
    state = pickle.loads(blob)  # vulnerable
    return str(state)


@app.route("/restore-defaults", methods=["POST"])
def restore_defaults():
    request.form["state"]
    state = pickle.loads(DEFAULTS)  # safe
    return str(state)


@app.route("/config", methods=["POST"])
def config():
    data = request.get_data()
    settings = yaml.load(data, Loader=yaml.Loader)  # vulnerable
    return str(settings)


@app.route("/config-safe", methods=["POST"])
def config_safe():
    data = request.get_data()
    settings = yaml.safe_load(data)  # safe
    return jsonify(settings)


@app.route("/config-safe-loader", methods=["POST"])
def config_safe_loader():
    data = request.get_data()
    settings = yaml.load(data, Loader=yaml.SafeLoader)  # safe
    return jsonify(settings)


@app.route("/cart")
def cart():
    raw = request.cookies.get("cart", "")
    items = jsonpickle.decode(raw)  # vulnerable
    return str(items)


@app.route("/cart-constant")
def cart_constant():
    raw = request.cookies.get("cart", "")
    raw = '{"items": []}'
    items = jsonpickle.decode(raw)  # safe
    return str(items)


@app.route("/code", methods=["POST"])
def code_object():
    blob = request.files["blob"].read()
    return str(marshal.loads(blob))  # vulnerable


@app.route("/code-dead", methods=["POST"])
def code_dead():
    blob = request.files["blob"].read()
    size = 10
    if size - 10:
        return str(marshal.loads(blob))  # safe
    return "disabled"


def load_session(raw):
    return pickle.loads(base64.urlsafe_b64decode(raw))  # vulnerable


@app.route("/session")
def session_view():
    return str(load_session(request.headers["X-Session"]))


def session_django(request):
    raw = request.COOKIES["prefs"]
    prefs = pickle.loads(base64.b64decode(raw))  # vulnerable
    return HttpResponse(str(prefs))


def session_django_safe(request):
    raw = request.COOKIES["prefs"]
    cache = {"prefs": raw, "default": DEFAULTS}
    prefs = pickle.loads(cache["default"])  # safe
    return HttpResponse(str(prefs))


def upload(request):
    doc = request.body
    obj = yaml.unsafe_load(doc)  # vulnerable
    return HttpResponse(str(obj))


def upload_safe(request):
    doc = request.body
    obj = yaml.load(doc, Loader=yaml.CSafeLoader)  # safe
    return JsonResponse(obj)


@api.post("/import")
def import_state(payload: str):
    return {"state": pickle.loads(bytes.fromhex(payload))}  # vulnerable


@api.post("/import-json")
def import_json(payload: str):
    import json

    return {"state": json.loads(payload)}  # safe


@api.post("/yaml")
def yaml_full(doc: str):
    return {"doc": yaml.full_load(doc)}  # vulnerable


@api.post("/yaml-safe")
def yaml_safe(doc: str):
    return {"doc": yaml.load(doc, yaml.SafeLoader)}  # safe


@app.route("/unpickle-list")
def unpickle_list():
    blobs = [DEFAULTS, request.args["blob"].encode()]
    return str(pickle.loads(blobs[1]))  # vulnerable


@app.route("/unpickle-list-safe")
def unpickle_list_safe():
    blobs = [DEFAULTS, request.args["blob"].encode()]
    return str(pickle.loads(blobs[0]))  # safe
