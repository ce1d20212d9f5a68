import xml.sax
from xml.dom import pulldom
from xml.sax.handler import feature_external_ges, feature_external_pes

import xmltodict
from django.http import JsonResponse
from fastapi import FastAPI
from flask import Flask, jsonify, request
from lxml import etree

app = Flask(__name__)
api = FastAPI()


@app.route("/import", methods=["POST"])
def import_xml():
    parser = etree.XMLParser(resolve_entities=True)  # vulnerable
    doc = etree.fromstring(request.get_data(), parser)
    return jsonify(doc.tag)


@app.route("/import-safe", methods=["POST"])
def import_safe():
    parser = etree.XMLParser(resolve_entities=False, no_network=True)  # safe
    doc = etree.fromstring(request.get_data(), parser)
    return jsonify(doc.tag)


@app.route("/sax", methods=["POST"])
def sax():
    parser = xml.sax.make_parser()
    parser.setFeature(feature_external_ges, True)  # vulnerable
    parser.parse(request.files["doc"])
    return jsonify(True)


@app.route("/sax-default", methods=["POST"])
def sax_default():
    parser = xml.sax.make_parser()  # safe
    parser.parse(request.files["doc"])
    return jsonify(True)


@app.route("/sax-off", methods=["POST"])
def sax_off():
    parser = xml.sax.make_parser()
    parser.setFeature(feature_external_ges, False)  # safe
    parser.parse(request.files["doc"])
    return jsonify(True)


@app.route("/sax-pes", methods=["POST"])
def sax_pes():
    parser = xml.sax.make_parser()
    enabled = 1
    parser.setFeature(feature_external_pes, enabled)  # vulnerable
    parser.parse(request.files["doc"])
    return jsonify(True)


@app.route("/sax-dead", methods=["POST"])
def sax_dead():
    parser = xml.sax.make_parser()
    if 10 < 3:
        parser.setFeature(feature_external_ges, True)  # safe
    parser.parse(request.files["doc"])
    return jsonify(True)


@app.route("/dtd", methods=["POST"])
def dtd():
    parser = etree.XMLParser(load_dtd=True, no_network=False)  # vulnerable
    tree = etree.parse(request.files["doc"], parser)
    return jsonify(tree.getroot().tag)


@app.route("/dtd-local", methods=["POST"])
def dtd_local():
    parser = etree.XMLParser(load_dtd=True, resolve_entities=False)  # safe
    tree = etree.parse(request.files["doc"], parser)
    return jsonify(tree.getroot().tag)


def feed(request):
    parser = etree.XMLParser(resolve_entities=True, load_dtd=True)  # vulnerable
    root = etree.fromstring(request.body, parser=parser)
    return JsonResponse({"tag": root.tag})


def feed_safe(request):
    root = etree.fromstring(request.body)  # safe
    return JsonResponse({"tag": root.tag})


def pulled(request):
    parser = xml.sax.make_parser()
    parser.setFeature(feature_external_ges, True)  # vulnerable
    events = pulldom.parseString(request.body.decode(), parser=parser)
    return JsonResponse({"n": len(list(events))})


def pulled_safe(request):
    events = pulldom.parseString(request.body.decode())  # safe
    return JsonResponse({"n": len(list(events))})


@api.post("/dict")
def as_dict(body: str):
    return xmltodict.parse(body, disable_entities=False)  # vulnerable


@api.post("/dict-safe")
def as_dict_safe(body: str):
    return xmltodict.parse(body)  # safe


@api.post("/lxml")
def lxml_entities(body: str):
    resolve = True
    parser = etree.XMLParser(resolve_entities=resolve)  # vulnerable
    return {"tag": etree.fromstring(body.encode(), parser).tag}


@api.post("/lxml-off")
def lxml_off(body: str):
    resolve = False
    parser = etree.XMLParser(resolve_entities=resolve)  # safe
    return {"tag": etree.fromstring(body.encode(), parser).tag}


@api.post("/stdlib")
def stdlib(body: str):
    import xml.etree.ElementTree as ET

    return {"tag": ET.fromstring(body).tag}  # safe


def configure(parser):
    parser.setFeature(feature_external_ges, True)  # vulnerable
    return parser


@app.route("/configured", methods=["POST"])
def configured():
    parser = configure(xml.sax.make_parser())
    parser.parse(request.files["doc"])
    return jsonify(True)


@app.route("/minidom", methods=["POST"])
def minidom_view():
    from xml.dom import minidom

    return jsonify(minidom.parseString(request.get_data()).documentElement.tagName)  # safe


@api.post("/sax-features")
def sax_features(body: str):
    reader = xml.sax.make_parser()
    reader.setFeature("http://xml.org/sax/features/external-general-entities", True)  # vulnerable
    return {"n": len(body)}
