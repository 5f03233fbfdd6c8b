using System;

namespace Falconet.Http;

/// <summary>The default schema's header set: what the non-generic server, <see cref="HttpContext"/> and its collections use.</summary>
internal readonly struct BuiltInHeaderSet : IHeaderSet
{
    public static HeaderTable RequestHeaderTable => RequestHeaders.Table;

    public static HeaderTable ResponseHeaderTable => ResponseHeaders.Table;

    public static int IndexOfRequestHeader(ReadOnlySpan<byte> name) => RequestHeaders.IndexOf(name);
}
