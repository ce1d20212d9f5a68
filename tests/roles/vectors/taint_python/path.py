import codecs
import os
import shutil
from pathlib import Path

from django.http import FileResponse, HttpResponse
from fastapi import FastAPI
from flask import Flask, request, send_file
from werkzeug.utils import secure_filename

app = Flask(__name__)
api = FastAPI()
BASE = "/srv/files"


@app.route("/read")
def read():
    name = request.args.get("name")
    with open(os.path.join(BASE, name)) as fh:  # vulnerable
        return fh.read()


@app.route("/read-basename")
def read_basename():
    name = request.args.get("name")
    with open(os.path.join(BASE, os.path.basename(name))) as fh:  # safe
        return fh.read()


@app.route("/download")
def download():
    name = request.cookies.get("last_file")
    return send_file(BASE + "/" + name)  # vulnerable


@app.route("/download-secure")
def download_secure():
    name = secure_filename(request.cookies.get("last_file", ""))
    return send_file(BASE + "/" + name)  # safe


@app.route("/delete", methods=["POST"])
def delete():
    target = request.form["target"]
    os.remove(f"{BASE}/{target}")  # vulnerable
    return "deleted"


@app.route("/delete-contained", methods=["POST"])
def delete_contained():
    target = request.form["target"]
    full = os.path.realpath(os.path.join(BASE, target))
    if not full.startswith(BASE + os.sep):
        return "outside", 400
    os.remove(full)  # safe
    return "deleted"


@app.route("/copy")
def copy():
    source = request.values["from"]
    shutil.copy(source, "/tmp/copy")  # vulnerable
    return "copied"


@app.route("/copy-fixed")
def copy_fixed():
    source = request.values["from"]
    names = {"report": "/srv/report.pdf", "asked": source}
    shutil.copy(names["report"], "/tmp/copy")  # safe
    return "copied"


@app.route("/notes")
def notes():
    note = request.headers.get("X-Note")
    return Path(BASE, note).read_text()  # vulnerable


@app.route("/notes-checked")
def notes_checked():
    note = request.headers.get("X-Note", "")
    if ".." in note or "/" in note:
        return "bad", 400
    return codecs.open(BASE + "/" + note, encoding="utf-8").read()  # safe


def fetch(request, filename):
    return FileResponse(open("/srv/media/" + filename, "rb"))  # vulnerable


def fetch_fixed(request, filename):
    return FileResponse(open("/srv/media/" + os.path.basename(filename), "rb"))  # safe


def upload(request):
    name = request.POST["name"]
    with codecs.open("/srv/uploads/" + name, "w", "utf-8") as fh:  # vulnerable
        fh.write(request.POST["body"])
    return HttpResponse("saved")


def upload_fixed(request):
    name = request.POST["name"]
    if not name.isalnum():
        return HttpResponse("bad name", status=400)
    with codecs.open("/srv/uploads/" + name, "w", "utf-8") as fh:  # safe
        fh.write(request.POST["body"])
    return HttpResponse("saved")


@api.get("/logs")
def logs(name: str):
    return {"text": open("/var/log/app/" + name).read()}  # vulnerable


@api.get("/logs-by-day")
def logs_by_day(day: int):
    return {"text": open(f"/var/log/app/{day}.log").read()}  # safe


@api.delete("/cache")
def clear(folder: str):
    shutil.rmtree(os.path.join("/var/cache/app", folder))  # vulnerable
    return {}


@api.delete("/cache-constant")
def clear_constant(folder: str):
    keep = "tmp"
    folder = keep if len(keep) == 3 else folder
    shutil.rmtree(os.path.join("/var/cache/app", folder))  # safe
    return {}


def resolve(root, name):
    return root + "/" + name


@app.route("/resolve")
def resolve_view():
    path = resolve(BASE, request.args["p"])
    return open(path).read()  # vulnerable


@app.route("/resolve-fixed")
def resolve_fixed():
    path = resolve(BASE, "index.txt")
    return open(path).read()  # safe
