using System;

namespace Falconet.Http;

/// <summary>Receives header (or trailer) fields one at a time; implemented by a struct so the parser is specialized per handler.</summary>
public interface IHttpHeadersHandler
{
    /// <summary>Called per field line with the name validated as a token and the value validated and trimmed of OWS; return false to reject the request with 400.</summary>
    bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value);

    /// <summary>Called once after the empty line that ends the section.</summary>
    void OnHeadersComplete();
}
