"""Stack traces as five runtimes print them (Python's through the shop of ``project.py``): one
set of samples for the tests that read traces and for those that read them as logs deliver
them."""

PY = """Traceback (most recent call last):
  File "/home/dev/shop/app.py", line 3, in <module>
    main()
  File "/home/dev/shop/src/shop/cart.py", line 20, in total
    subtotal -= subtotal * discount_for(self.code)
  File "/home/dev/shop/src/shop/pricing.py", line 6, in discount_for
    if code.startswith("VIP"):
AttributeError: 'NoneType' object has no attribute 'startswith'"""

JS = """TypeError: Cannot read properties of undefined (reading 'id')
    at getUser (/app/src/users.ts:42:17)
    at async handler (file:///app/src/routes/index.js:10:3)"""

GO = """panic: runtime error: index out of range [5] with length 3

goroutine 1 [running]:
main.lookup(...)
\t/home/u/proj/cmd/tool/main.go:12 +0x1d
main.main()
\t/home/u/proj/cmd/tool/main.go:20 +0x25"""

RUST = """thread 'main' panicked at src/parser.rs:88:14:
called `Option::unwrap()` on a `None` value"""

JAVA = """Exception in thread "main" java.lang.IllegalStateException: Queue full for group orders
\tat com.acme.queue.Broker.offer(Broker.java:57)
\tat com.acme.App.main(App.java:12)"""
