using System;
using System.Text.Json;
using System.Threading.Tasks;
using Falconet.Http;
using Microsoft.Extensions.Primitives;

namespace Falconet.Samples.Plaintext;

/// <summary>The TechEmpower plaintext and JSON endpoints: /plaintext, /json, and 404 for anything else.</summary>
internal sealed class PlaintextApplication : IHttpApplication
{
    private static readonly StringValues s_textPlain = new("text/plain");
    private static readonly StringValues s_applicationJson = new("application/json");

    // One writer per thread: a handler that completes synchronously never shares it, and Reset reuses it.
    [ThreadStatic]
    private static Utf8JsonWriter? t_jsonWriter;

    private static ReadOnlySpan<byte> HelloWorld => "Hello, World!"u8;

    public ValueTask Handle(HttpContext context)
    {
        ReadOnlySpan<byte> path = context.Request.PathBytes;
        HttpResponse response = context.Response;
        if (path.SequenceEqual("/plaintext"u8))
        {
            response.Headers.ContentType = s_textPlain;
            response.Write(HelloWorld);
        }
        else if (path.SequenceEqual("/json"u8))
        {
            response.Headers.ContentType = s_applicationJson;
            WriteJson(response);
        }
        else
        {
            response.StatusCode = 404;
        }

        return default;
    }

    private static void WriteJson(HttpResponse response)
    {
        Utf8JsonWriter? writer = t_jsonWriter;
        if (writer is null)
        {
            writer = new Utf8JsonWriter(response.BodyWriter, new JsonWriterOptions { SkipValidation = true });
            t_jsonWriter = writer;
        }
        else
        {
            writer.Reset(response.BodyWriter);
        }

        JsonSerializer.Serialize(writer, new JsonMessage("Hello, World!"), PlaintextJsonContext.Default.JsonMessage);
        writer.Flush();
    }
}
