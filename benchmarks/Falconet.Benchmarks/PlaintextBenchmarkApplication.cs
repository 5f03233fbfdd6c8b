using System;
using System.Threading.Tasks;
using Falconet.Http;
using Microsoft.Extensions.Primitives;

namespace Falconet.Benchmarks;

/// <summary>The sample's /plaintext endpoint, for the connection-loop benchmarks: Content-Type and a 13-byte body, Content-Length from the server.</summary>
internal sealed class PlaintextBenchmarkApplication : IHttpApplication
{
    private static readonly StringValues s_textPlain = new("text/plain");

    public ValueTask Handle(HttpContext context)
    {
        HttpResponse response = context.Response;
        if (!context.Request.PathBytes.SequenceEqual("/plaintext"u8))
        {
            response.StatusCode = 404;
            return default;
        }

        response.Headers.ContentType = s_textPlain;
        response.Write("Hello, World!"u8);
        return default;
    }
}
