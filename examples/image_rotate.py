"""File in, file out: the agent takes an image and returns a processed one.

The scenario of the v0.1 spec's file-exchange example. To stay free of image
libraries, the "processing" reverses the bytes of each file it is sent, and
says so; the point is the round trip of file parts (inline bytes or URI).

    interlingua send http://localhost:8000 "process this" --file photo.png
"""

from interlingua import Agent, Context, file_part
from interlingua.core.parts import file_parts


async def process(ctx: Context) -> None:
    files = file_parts(ctx.message)
    if not files:
        await ctx.reject("Send at least one file to process.")
        return
    for f in files:
        if f.raw is not None:
            out = file_part(raw=f.raw[::-1], media_type=f.media_type,
                            filename=f"processed_{f.filename or 'file'}")
        else:
            # A file by reference is answered by reference.
            out = file_part(uri=f"{f.uri}#processed", media_type=f.media_type,
                            filename=f"processed_{f.filename or 'file'}")
        await ctx.artifact(out, name=out.filename, last_chunk=True)
    await ctx.complete(f"Processed {len(files)} file(s).")


agent = Agent(
    name="File processor",
    description="Returns each file it is sent, processed (its bytes reversed).",
    executor=process,
    input_modes=["image/png", "application/octet-stream", "text/plain"],
    output_modes=["image/png", "application/octet-stream"],
)
