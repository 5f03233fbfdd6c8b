using System;

namespace Falconet.Http.Http1;

/// <summary>Receives the parsed request line; implemented by a struct so the parser is specialized per handler.</summary>
public interface IHttpRequestLineHandler
{
    /// <summary>Called once per request line; <paramref name="target"/> and <paramref name="methodToken"/> are valid only during the call.</summary>
    /// <param name="method">The known method, or <see cref="KnownMethod.Custom"/> for any other token.</param>
    /// <param name="methodToken">The method bytes as sent (case-sensitive).</param>
    /// <param name="target">The raw request-target bytes (visible ASCII only).</param>
    /// <param name="form">Which of the four target forms <paramref name="target"/> is.</param>
    /// <param name="queryIndex">Index of the first '?' in <paramref name="target"/>, or -1.</param>
    /// <param name="version">HTTP/1.0 or HTTP/1.1.</param>
    void OnRequestLine(KnownMethod method, ReadOnlySpan<byte> methodToken, ReadOnlySpan<byte> target,
                       RequestTargetForm form, int queryIndex, KnownVersion version);
}
