import sqlite3

from django.db import connection
from fastapi import FastAPI
from flask import Flask, request
from sqlalchemy import text

app = Flask(__name__)
api = FastAPI()
db = sqlite3.connect("shop.db")
ORDERS = {"asc", "desc"}


@app.route("/user")
def user():
    name = request.args.get("name")
    cur = db.cursor()
    cur.execute("SELECT * FROM users WHERE name = '" + name + "'")  # vulnerable
    return str(cur.fetchall())


@app.route("/user-param")
def user_param():
    name = request.args.get("name")
    cur = db.cursor()
    cur.execute("SELECT * FROM users WHERE name = ?", (name,))  # safe
    return str(cur.fetchall())


@app.route("/search", methods=["POST"])
def search():
    term = request.form["term"]
    query = f"SELECT id FROM items WHERE title LIKE '%{term}%'"
    rows = db.execute(query)  # vulnerable
    return str(list(rows))


@app.route("/search-fixed", methods=["POST"])
def search_fixed():
    term = request.form["term"]
    query = "SELECT id FROM items WHERE title LIKE ?"
    rows = db.execute(query, (f"%{term}%",))  # safe
    return str(list(rows))


@app.route("/sort")
def sort():
    order = request.args.get("order", "asc")
    sql = "SELECT * FROM items ORDER BY price %s" % order
    return str(db.execute(sql).fetchall())  # vulnerable


@app.route("/sort-allowed")
def sort_allowed():
    order = request.args.get("order", "asc")
    if order not in ORDERS:
        order = "asc"
    sql = "SELECT * FROM items ORDER BY price %s" % order
    return str(db.execute(sql).fetchall())  # safe


@app.route("/count")
def count():
    table = request.cookies.get("table")
    sql = "SELECT count(*) FROM {}".format(table)
    return str(db.execute(sql).fetchone())  # vulnerable


@app.route("/count-fixed")
def count_fixed():
    table = request.cookies.get("table")
    choice = {"a": "orders", "b": table}
    sql = "SELECT count(*) FROM {}".format(choice["a"])
    return str(db.execute(sql).fetchone())  # safe


def find(engine, ident):
    with engine.connect() as conn:
        return conn.execute(text(f"SELECT * FROM t WHERE id = {ident}"))  # vulnerable


@app.route("/find")
def find_view():
    return str(find(app.config["ENGINE"], request.args["id"]))


@app.route("/find-int")
def find_int():
    ident = int(request.args["id"])
    with app.config["ENGINE"].connect() as conn:
        return str(conn.execute(text(f"SELECT * FROM t WHERE id = {ident}")))  # safe


def orders(request):
    customer = request.GET["customer"]
    with connection.cursor() as cur:
        cur.execute("SELECT * FROM orders WHERE customer = '%s'" % customer)  # vulnerable
        return cur.fetchall()


def orders_fixed(request):
    customer = request.GET["customer"]
    with connection.cursor() as cur:
        cur.execute("SELECT * FROM orders WHERE customer = %s", [customer])  # safe
        return cur.fetchall()


def profile(request, user_id):
    from myapp.models import Profile

    return Profile.objects.raw("SELECT * FROM profile WHERE user_id = " + user_id)  # vulnerable


def profile_fixed(request, user_id):
    from myapp.models import Profile

    return Profile.objects.raw("SELECT * FROM profile WHERE user_id = %s", [user_id])  # safe


@api.get("/items")
def items(q: str):
    cur = db.cursor()
    cur.execute(f"SELECT * FROM items WHERE name = '{q}'")  # vulnerable
    return cur.fetchall()


@api.get("/items-id")
def items_id(item_id: int):
    cur = db.cursor()
    cur.execute(f"SELECT * FROM items WHERE id = {item_id}")  # safe
    return cur.fetchall()


@api.get("/tags")
def tags(tag: str):
    parts = []
    parts.append("SELECT * FROM tags WHERE name = '")
    parts.append(tag)
    parts.append("'")
    db.executescript("".join(parts))  # vulnerable
    return {}


@api.get("/tags-constant")
def tags_constant(tag: str):
    num = 3
    tag = "news" if num * 2 > 5 else tag
    db.executescript("SELECT * FROM tags WHERE name = '" + tag + "'")  # safe
    return {}


class Store:
    def where(self, column, value):
        return f"SELECT * FROM stock WHERE {column} = '{value}'"


@app.route("/stock")
def stock():
    sql = Store().where("sku", request.values["sku"])
    return str(db.execute(sql).fetchall())  # vulnerable


@app.route("/stock-validated")
def stock_validated():
    sku = request.values["sku"]
    if not sku.isalnum():
        return "bad", 400
    sql = Store().where("sku", sku)
    return str(db.execute(sql).fetchall())  # safe
