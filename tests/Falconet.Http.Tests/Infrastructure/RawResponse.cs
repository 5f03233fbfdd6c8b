using System;
using System.Collections.Generic;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>A response as a raw client read it off the wire.</summary>
internal sealed class RawResponse
{
    public RawResponse(string statusLine, int statusCode, Dictionary<string, List<string>> headers, byte[] body, bool chunked)
    {
        StatusLine = statusLine;
        StatusCode = statusCode;
        Headers = headers;
        Body = body;
        Chunked = chunked;
    }

    public string StatusLine { get; }

    public int StatusCode { get; }

    public Dictionary<string, List<string>> Headers { get; }

    public byte[] Body { get; }

    public bool Chunked { get; }

    public string BodyText => System.Text.Encoding.UTF8.GetString(Body);

    public string? Header(string name) => Headers.TryGetValue(name, out List<string>? values) ? string.Join(", ", values) : null;
}
