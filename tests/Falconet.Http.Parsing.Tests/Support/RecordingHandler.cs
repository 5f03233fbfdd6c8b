using System;
using System.Collections.Generic;
using System.Text;
using Falconet.Http.Http1;

namespace Falconet.Http.Parsing.Tests.Support;

/// <summary>What a parse produced: every handler call as a line of text, and the header set the handler filled.</summary>
internal sealed class RequestRecord
{
    public List<string> Log { get; } = [];

    public RequestHeaders Headers { get; } = new();

    public KnownMethod Method { get; set; }

    public KnownVersion Version { get; set; }

    public static string Text(ReadOnlySpan<byte> bytes) => Encoding.Latin1.GetString(bytes);
}

/// <summary>A struct handler, as the connection uses: records every call and feeds the generated header set.</summary>
internal readonly struct RecordingHandler(RequestRecord record, string prefix = "") : IHttpRequestLineHandler, IHttpHeadersHandler
{
    public void OnRequestLine(KnownMethod method, ReadOnlySpan<byte> methodToken, ReadOnlySpan<byte> target,
        RequestTargetForm form, int queryIndex, KnownVersion version)
    {
        record.Method = method;
        record.Version = version;
        record.Log.Add($"{RequestRecord.Text(methodToken)} ({method}) {RequestRecord.Text(target)} {form} query={queryIndex} {version}");
    }

    public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        record.Log.Add($"{prefix}[{RequestRecord.Text(name)}]=[{RequestRecord.Text(value)}]");
        return prefix.Length > 0 || record.Headers.TryAppend(name, value);
    }

    public void OnHeadersComplete() => record.Log.Add($"{prefix}end of headers");
}
