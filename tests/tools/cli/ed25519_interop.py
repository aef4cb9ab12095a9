"""`webhooks sign --signing-key` and `webhooks verify --public-key` against an independent Ed25519
implementation: Python's `cryptography` package (Debian's python3-cryptography, OpenSSL-backed but
with its own key handling and encodings). Both ways: Python signs and the CLI verifies; the CLI
signs and Python verifies. Ed25519 is deterministic (RFC 8032), so the CLI's signatures must also
equal Python's byte for byte. Registered as the CTest test cli.ed25519_python; WEBHOOKS_CLI is
build/bin/webhooks."""
import base64
import hashlib
import hmac
import os
import subprocess
import tempfile
import unittest

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

CLI = os.environ["WEBHOOKS_CLI"]
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TIMESTAMP = 1614265330
BODY = b'{"test": 2432232314}'
# RFC 8032, section 7.1, TEST 1.
RFC_SEED = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
# The Standard Webhooks v1 test vector's secret and signature over MSG_ID, TIMESTAMP and BODY.
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
V1 = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def b64(data):
    return base64.b64encode(data).decode()


def raw_public(key):
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def signing_key_text(key):
    return "whsk_" + b64(key.private_bytes(serialization.Encoding.Raw,
                                           serialization.PrivateFormat.Raw,
                                           serialization.NoEncryption()))


def signed_content(body=BODY):
    return f"{MSG_ID}.{TIMESTAMP}.".encode() + body


class Ed25519Interop(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.body = self.write("body", BODY)

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, data):
        path = os.path.join(self.dir.name, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def cli(self, *args):
        run = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=30)
        return run.returncode, run.stdout, run.stderr

    def verify(self, signature, public_keys, body=None):
        headers = self.write("headers", (f"webhook-id: {MSG_ID}\nwebhook-timestamp: {TIMESTAMP}\n"
                                         f"webhook-signature: {signature}\n").encode())
        args = ["verify", "--headers-file", headers, "--body-file", body or self.body,
                "--now", str(TIMESTAMP)]
        for key in public_keys:
            args += ["--public-key", key]
        return self.cli(*args)

    def sign(self, *keys):
        code, out, err = self.cli("sign", "--id", MSG_ID, "--timestamp", str(TIMESTAMP),
                                  "--body-file", self.body, *keys)
        self.assertEqual((code, err), (0, ""))
        lines = out.splitlines()
        self.assertEqual(lines[:2], [f"webhook-id: {MSG_ID}", f"webhook-timestamp: {TIMESTAMP}"])
        self.assertTrue(lines[2].startswith("webhook-signature: "))
        return lines[2][len("webhook-signature: "):]

    def test_python_signs_cli_verifies(self):
        key = Ed25519PrivateKey.generate()
        public = "whpk_" + b64(raw_public(key))
        signature = "v1a," + b64(key.sign(signed_content()))
        self.assertEqual(self.verify(signature, [public]), (0, "valid\n", ""))
        other = "whpk_" + b64(raw_public(Ed25519PrivateKey.generate()))
        self.assertEqual(self.verify(signature, [other, public]), (0, "valid\n", ""))
        self.assertEqual(self.verify(V1 + " " + signature, [public]), (0, "valid\n", ""))

    def test_cli_refuses_wrong_key_tampered_body_and_bad_prefix(self):
        key = Ed25519PrivateKey.generate()
        public = "whpk_" + b64(raw_public(key))
        signature = "v1a," + b64(key.sign(signed_content()))
        no_match = "invalid: no_matching_signature: no signature matches any configured secret or key\n"
        other = "whpk_" + b64(raw_public(Ed25519PrivateKey.generate()))
        self.assertEqual(self.verify(signature, [other]), (1, no_match, ""))
        tampered = self.write("tampered", b'{"test": 2432232315}')
        self.assertEqual(self.verify(signature, [public], tampered), (1, no_match, ""))
        code, out, err = self.verify(signature, ["whsk_" + b64(raw_public(key))])
        self.assertEqual((code, out), (2, ""))
        self.assertIn("Ed25519 public key must start with 'whpk_'", err)

    def test_cli_signs_python_verifies_byte_for_byte(self):
        key = Ed25519PrivateKey.generate()
        signature = self.sign("--signing-key", signing_key_text(key))
        self.assertEqual(signature, "v1a," + b64(key.sign(signed_content())))
        key.public_key().verify(base64.b64decode(signature[4:]), signed_content())
        with self.assertRaises(InvalidSignature):
            key.public_key().verify(base64.b64decode(signature[4:]),
                                    signed_content(b'{"test": 2432232315}'))

    def test_rfc8032_key_and_both(self):
        key = Ed25519PrivateKey.from_private_bytes(RFC_SEED)
        v1a = "v1a," + b64(key.sign(signed_content()))
        self.assertEqual(v1a, "v1a,fldxM4gAKugP6nnt1hdz3sgGfZ6d99nzrMFnZOELIxbzEHoVmAb2ADpkJK7zgPeP"
                              "mPsle0zV9jSeGlHFG2NVAw==")
        self.assertEqual(self.sign("--signing-key", signing_key_text(key)), v1a)
        mac = hmac.new(base64.b64decode(SECRET[6:]), signed_content(), hashlib.sha256).digest()
        self.assertEqual("v1," + b64(mac), V1)
        self.assertEqual(self.sign("--secret", SECRET, "--signing-key", signing_key_text(key)),
                         V1 + " " + v1a)

    def test_sign_refuses_a_missing_or_bad_key(self):
        code, out, err = self.cli("sign", "--id", MSG_ID, "--timestamp", str(TIMESTAMP),
                                  "--body-file", self.body)
        self.assertEqual((code, out, err), (
            2, "", "webhooks: sign needs --secret or --signing-key: give --secret, --secret-file or "
            "WEBHOOKS_SECRET (v1), or --signing-key, --signing-key-file or WEBHOOKS_SIGNING_KEY (v1a)\n"))
        public = "whpk_" + b64(raw_public(Ed25519PrivateKey.generate()))
        code, out, err = self.cli("sign", "--id", MSG_ID, "--timestamp", str(TIMESTAMP),
                                  "--body-file", self.body, "--signing-key", public)
        self.assertEqual((code, out), (2, ""))
        self.assertIn("Ed25519 signing key must start with 'whsk_'", err)


if __name__ == "__main__":
    unittest.main()
