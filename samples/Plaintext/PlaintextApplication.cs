using System;
using System.Buffers;
using System.Text.Json;
using System.Threading.Tasks;
using Falconet.Http;
using Microsoft.Extensions.Primitives;

namespace Falconet.Samples.Plaintext;

/// <summary>
/// The TechEmpower plaintext and JSON endpoints: /plaintext, /json (GET and HEAD, 405 for other methods); for deployments
/// /health (200 "ready" while the server is ready, 503 "draining" once it stops: a load balancer's readiness check) and
/// /client (the client's address as the server sees it: through a PROXY protocol endpoint, the one the proxy reported);
/// 404 for anything else.
/// </summary>
internal sealed class PlaintextApplication : IHttpApplication
{
    private static readonly StringValues s_textPlain = new("text/plain");
    private static readonly StringValues s_applicationJson = new("application/json");
    private static readonly StringValues s_getHead = new("GET, HEAD");

    // One writer per thread: a handler that completes synchronously never shares it, and Reset reuses it.
    [ThreadStatic]
    private static Utf8JsonWriter? t_jsonWriter;

    private static ReadOnlySpan<byte> HelloWorld => "Hello, World!"u8;

    /// <summary>What /health reports (the server's <c>IsReady</c>); always ready when not set.</summary>
    public Func<bool>? Readiness { get; set; }

    public ValueTask Handle(HttpContext context)
    {
        ReadOnlySpan<byte> path = context.Request.PathBytes;
        HttpResponse response = context.Response;
        bool plaintext = path.SequenceEqual("/plaintext"u8);
        if (!plaintext && !path.SequenceEqual("/json"u8))
        {
            HandleOther(context, path);
        }
        else if (context.Request.Method is not (KnownMethod.Get or KnownMethod.Head))
        {
            // RFC 9110 section 15.5.6: a 405 lists the methods the resource supports. HEAD is answered like GET;
            // the server leaves its body out.
            response.StatusCode = 405;
            response.Headers.Allow = s_getHead;
        }
        else if (plaintext)
        {
            response.Headers.ContentType = s_textPlain;
            response.Write(HelloWorld);
        }
        else
        {
            response.Headers.ContentType = s_applicationJson;
            WriteJson(response.BodyWriter);
        }

        return default;
    }

    /// <summary>/health, /client, or 404.</summary>
    private void HandleOther(HttpContext context, ReadOnlySpan<byte> path)
    {
        HttpResponse response = context.Response;
        if (path.SequenceEqual("/health"u8))
        {
            // A readiness check: unready as soon as the stop begins, while requests are still served (docs/deployment.md).
            bool ready = Readiness?.Invoke() ?? true;
            response.StatusCode = ready ? 200 : 503;
            response.Headers.ContentType = s_textPlain;
            response.Write(ready ? "ready"u8 : "draining"u8);
        }
        else if (path.SequenceEqual("/client"u8))
        {
            response.Headers.ContentType = s_textPlain;
            response.Write(System.Text.Encoding.ASCII.GetBytes(context.RemoteEndPoint?.ToString() ?? "unknown"));
        }
        else
        {
            response.StatusCode = 404;
        }
    }

    /// <summary>Serializes the /json message into <paramref name="output"/> with this thread's writer.</summary>
    internal static void WriteJson(IBufferWriter<byte> output)
    {
        Utf8JsonWriter? writer = t_jsonWriter;
        if (writer is null)
        {
            writer = new Utf8JsonWriter(output, new JsonWriterOptions { SkipValidation = true });
            t_jsonWriter = writer;
        }
        else
        {
            writer.Reset(output);
        }

        JsonSerializer.Serialize(writer, new JsonMessage("Hello, World!"), PlaintextJsonContext.Default.JsonMessage);
        writer.Flush();

        // The writer outlives the request on its thread: pointed at the response, it would keep the connection's
        // whole object graph (and its pool blocks' owner) alive until the thread's next /json request.
        writer.Reset(DetachedBufferWriter.Instance);
    }

    /// <summary>The target a parked writer points at between requests; it is never written to.</summary>
    private sealed class DetachedBufferWriter : IBufferWriter<byte>
    {
        public static readonly DetachedBufferWriter Instance = new();

        public void Advance(int count) => throw new InvalidOperationException("The JSON writer is not attached to a response.");

        public Memory<byte> GetMemory(int sizeHint = 0) => throw new InvalidOperationException("The JSON writer is not attached to a response.");

        public Span<byte> GetSpan(int sizeHint = 0) => throw new InvalidOperationException("The JSON writer is not attached to a response.");
    }
}
