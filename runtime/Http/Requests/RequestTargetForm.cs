namespace Falconet.Http;

/// <summary>The four request-target forms of RFC 9112 section 3.2.</summary>
public enum RequestTargetForm : byte
{
    /// <summary>absolute-path [ "?" query ], e.g. "/index.html?x=1".</summary>
    Origin,

    /// <summary>absolute-URI, e.g. "http://example.com/index.html".</summary>
    Absolute,

    /// <summary>uri-host ":" port, only with CONNECT.</summary>
    Authority,

    /// <summary>"*", only with OPTIONS.</summary>
    Asterisk,
}
