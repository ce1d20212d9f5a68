import os
import re
import shlex
import subprocess

from django.http import HttpResponse
from fastapi import FastAPI
from flask import Flask, request

app = Flask(__name__)
api = FastAPI()
ALLOWED_HOSTS = {"alpha", "beta"}


@app.route("/ping")
def ping():
    host = request.args.get("host")
    os.system("ping -c 1 " + host)  # vulnerable
    return "ok"


@app.route("/ping-quoted")
def ping_quoted():
    host = request.args.get("host")
    os.system("ping -c 1 " + shlex.quote(host))  # safe
    return "ok"


@app.route("/ls", methods=["POST"])
def listing():
    folder = request.form["folder"]
    out = subprocess.check_output(f"ls -la {folder}", shell=True)  # vulnerable
    return out


@app.route("/ls-list", methods=["POST"])
def listing_list():
    folder = request.form["folder"]
    out = subprocess.check_output(["ls", "-la", folder])  # safe
    return out


@app.route("/grep")
def grep():
    pattern = request.cookies.get("pattern", "")
    parts = ["grep", "-r"]
    command = " ".join(parts) + " " + pattern
    return subprocess.run(command, shell=True, capture_output=True).stdout  # vulnerable


@app.route("/grep-constant")
def grep_constant():
    pattern = request.cookies.get("pattern", "")
    limit = 40
    if limit * 3 > 100:
        pattern = "TODO"
    return subprocess.run("grep -r " + pattern, shell=True, capture_output=True).stdout  # safe


def run_tool(arg):
    return subprocess.Popen("convert " + arg, shell=True)  # vulnerable


@app.route("/convert")
def convert():
    run_tool(request.values.get("file"))
    return "started"


def tidy(value):
    return value.strip().lower()


@app.route("/host-allowed")
def host_allowed():
    host = tidy(request.headers.get("X-Host", ""))
    if host not in ALLOWED_HOSTS:
        return "no", 400
    os.popen("nslookup " + host)  # safe
    return "ok"


@app.route("/host-digits")
def host_digits():
    port = request.args.get("port", "")
    if not re.fullmatch(r"[0-9]{1,5}", port):
        return "bad port", 400
    os.system("nc -z localhost " + port)  # safe
    return "ok"


@app.route("/host-int")
def host_int():
    port = int(request.args.get("port", "80"))
    os.system(f"nc -z localhost {port}")  # safe
    return "ok"


@app.route("/shell-list")
def shell_list():
    target = request.json["target"]
    subprocess.run(["sh", "-c", "tar czf backup.tgz " + target])  # vulnerable
    return "ok"


@app.route("/env-map")
def env_map():
    values = {"safe": "uptime", "user": request.args.get("cmd")}
    subprocess.call(values["safe"], shell=True)  # safe
    return "ok"


@app.route("/env-map-user")
def env_map_user():
    values = {"safe": "uptime", "user": request.args.get("cmd")}
    subprocess.call(values["user"], shell=True)  # vulnerable
    return "ok"


def report(request, name):
    os.system("lpr /srv/reports/" + name)  # vulnerable
    return HttpResponse("queued")


def report_fixed(request, name):
    os.system("lpr /srv/reports/" + shlex.quote(name))  # safe
    return HttpResponse("queued")


def archive(request):
    label = request.POST.get("label", "")
    subprocess.run("zip -r out.zip " + label, shell=True)  # vulnerable
    return HttpResponse("done")


def archive_dead(request):
    label = request.POST.get("label", "")
    if False:
        subprocess.run("zip -r out.zip " + label, shell=True)  # safe
    return HttpResponse("done")


@api.get("/whois")
def whois(domain: str):
    return subprocess.getoutput("whois " + domain)  # vulnerable


@api.get("/whois-id")
def whois_id(number: int):
    return subprocess.getoutput(f"whois AS{number}")  # safe


@api.post("/queue")
async def queue(job: str):
    jobs = ["echo start", job, "echo end"]
    jobs.pop(0)
    os.system(jobs[0])  # vulnerable
    return {"ok": True}


@api.post("/queue-end")
async def queue_end(job: str):
    jobs = ["echo start", job, "echo end"]
    jobs.pop(0)
    os.system(jobs[1])  # safe
    return {"ok": True}


class Runner:
    def __init__(self, prefix):
        self.prefix = prefix

    def line(self, arg):
        return self.prefix + " " + arg


@app.route("/runner")
def runner():
    cmd = Runner("du -sh").line(request.args["dir"])
    os.system(cmd)  # vulnerable
    return "ok"


@app.route("/runner-fixed")
def runner_fixed():
    cmd = Runner("du -sh").line("/srv")
    os.system(cmd)  # safe
    return "ok"
