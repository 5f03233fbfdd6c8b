using System;
using System.Globalization;
using System.Text;

namespace Falconet.Http.Http1;

/// <summary>Precomputed status lines ("HTTP/1.1 200 OK", without CRLF) and reason phrases for every status code 100-599.</summary>
public static class HttpStatusLines
{
    private const int MinCode = 100;
    private const int MaxCode = 599;

    private static readonly string[] s_reasonPhrases = BuildReasonPhrases();
    private static readonly byte[][] s_statusLines = BuildStatusLines();

    /// <summary>The bytes "HTTP/1.1 100 Continue\r\n\r\n", the interim response to Expect: 100-continue.</summary>
    public static ReadOnlySpan<byte> Continue => "HTTP/1.1 100 Continue\r\n\r\n"u8;

    /// <summary>Returns "HTTP/1.1 {code} {reason}" without the trailing CRLF; the reason is empty for an unnamed code.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The code is outside 100-599.</exception>
    public static ReadOnlySpan<byte> Get(int statusCode)
    {
        if ((uint)(statusCode - MinCode) > MaxCode - MinCode)
        {
            ThrowOutOfRange(statusCode);
        }

        return s_statusLines[statusCode - MinCode];
    }

    /// <summary>Returns the RFC 9110 reason phrase of a status code, or an empty string when the code has none.</summary>
    public static string GetReasonPhrase(int statusCode)
        => (uint)(statusCode - MinCode) <= MaxCode - MinCode ? s_reasonPhrases[statusCode - MinCode] : string.Empty;

    /// <summary>True when a response with this status never carries a body (1xx, 204, 304).</summary>
    public static bool IsBodyless(int statusCode) => statusCode < 200 || statusCode == 204 || statusCode == 304;

    private static byte[][] BuildStatusLines()
    {
        var lines = new byte[MaxCode - MinCode + 1][];
        for (int code = MinCode; code <= MaxCode; code++)
        {
            string reason = s_reasonPhrases[code - MinCode];
            string line = "HTTP/1.1 " + code.ToString(CultureInfo.InvariantCulture) + " " + reason;
            lines[code - MinCode] = Encoding.ASCII.GetBytes(line);
        }

        return lines;
    }

    private static string[] BuildReasonPhrases()
    {
        var phrases = new string[MaxCode - MinCode + 1];
        Array.Fill(phrases, string.Empty);

        void Set(int code, string phrase) => phrases[code - MinCode] = phrase;

        Set(100, "Continue");
        Set(101, "Switching Protocols");
        Set(102, "Processing");
        Set(103, "Early Hints");
        Set(200, "OK");
        Set(201, "Created");
        Set(202, "Accepted");
        Set(203, "Non-Authoritative Information");
        Set(204, "No Content");
        Set(205, "Reset Content");
        Set(206, "Partial Content");
        Set(207, "Multi-Status");
        Set(208, "Already Reported");
        Set(226, "IM Used");
        Set(300, "Multiple Choices");
        Set(301, "Moved Permanently");
        Set(302, "Found");
        Set(303, "See Other");
        Set(304, "Not Modified");
        Set(305, "Use Proxy");
        Set(307, "Temporary Redirect");
        Set(308, "Permanent Redirect");
        Set(400, "Bad Request");
        Set(401, "Unauthorized");
        Set(402, "Payment Required");
        Set(403, "Forbidden");
        Set(404, "Not Found");
        Set(405, "Method Not Allowed");
        Set(406, "Not Acceptable");
        Set(407, "Proxy Authentication Required");
        Set(408, "Request Timeout");
        Set(409, "Conflict");
        Set(410, "Gone");
        Set(411, "Length Required");
        Set(412, "Precondition Failed");
        Set(413, "Content Too Large");
        Set(414, "URI Too Long");
        Set(415, "Unsupported Media Type");
        Set(416, "Range Not Satisfiable");
        Set(417, "Expectation Failed");
        Set(418, "I'm a teapot");
        Set(421, "Misdirected Request");
        Set(422, "Unprocessable Content");
        Set(423, "Locked");
        Set(424, "Failed Dependency");
        Set(425, "Too Early");
        Set(426, "Upgrade Required");
        Set(428, "Precondition Required");
        Set(429, "Too Many Requests");
        Set(431, "Request Header Fields Too Large");
        Set(451, "Unavailable For Legal Reasons");
        Set(500, "Internal Server Error");
        Set(501, "Not Implemented");
        Set(502, "Bad Gateway");
        Set(503, "Service Unavailable");
        Set(504, "Gateway Timeout");
        Set(505, "HTTP Version Not Supported");
        Set(506, "Variant Also Negotiates");
        Set(507, "Insufficient Storage");
        Set(508, "Loop Detected");
        Set(510, "Not Extended");
        Set(511, "Network Authentication Required");
        return phrases;
    }

    private static void ThrowOutOfRange(int statusCode)
        => throw new ArgumentOutOfRangeException(nameof(statusCode), statusCode, "An HTTP status code is between 100 and 599.");
}
