using System;
using System.Buffers;
using System.Collections.Generic;
using System.Text;
using System.Threading.Tasks;
using Falconet.Http;
using Microsoft.Extensions.Primitives;

namespace Falconet.Fuzz;

/// <summary>Answers every request with 200 and a body that states what the server parsed: the request line, every header, then the body.</summary>
/// <remarks>It reads the whole body before it answers, so a body the server refuses reaches the client as the server's own error status.</remarks>
internal sealed class EchoApplication : IHttpApplication
{
    private readonly byte[] _buffer = new byte[1024];

    /// <summary>The method of every request the application was called for, in order (a HEAD answer has no body).</summary>
    public List<KnownMethod> Methods { get; } = [];

    /// <summary>Requests whose handler ended with an exception (the server answers those itself).</summary>
    public int Failed { get; set; }

    public async ValueTask Handle(HttpContext context)
    {
        HttpRequest request = context.Request;
        Methods.Add(request.Method);
        var body = new ArrayBufferWriter<byte>();
        try
        {
            while (true)
            {
                int read = await request.BodyReader.ReadAsync(_buffer).ConfigureAwait(false);
                if (read == 0)
                {
                    break;
                }

                body.Write(_buffer.AsSpan(0, read));
            }
        }
        catch
        {
            Failed++;
            throw;
        }

        var text = new StringBuilder();
        text.Append(request.MethodName).Append(' ').Append(Encoding.Latin1.GetString(request.RawTarget)).Append(' ')
            .Append(request.Protocol).Append(' ').Append(request.TargetForm).Append(" host=").Append(request.Host).Append('\n');
        foreach (KeyValuePair<string, StringValues> header in request.Headers)
        {
            text.Append(header.Key).Append(": ").Append(header.Value.ToString()).Append('\n');
        }

        text.Append("body ").Append(body.WrittenCount).Append('\n');
        context.Response.Write(Encoding.Latin1.GetBytes(text.ToString()));
        context.Response.Write(body.WrittenSpan);
    }
}
