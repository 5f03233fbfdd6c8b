using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;
using Falconet.Http;
using Falconet.Text;

namespace Falconet.Fuzz;

/// <summary>One final response as the client reads it.</summary>
/// <param name="StatusCode">The status.</param>
/// <param name="Body">The body, decoded from its framing.</param>
public sealed record Answer(int StatusCode, string Body);

/// <summary>
/// Reads what a server sent on one connection as a client would, strictly: HTTP/1.1 status lines, token header names,
/// bodies framed by Content-Length or chunked. Anything else is a <see cref="FuzzPropertyException"/>.
/// </summary>
internal static class ResponseStream
{
    /// <summary>
    /// Parses every response, checking that the server's own error answers (anything but 1xx and the echo's 200) are
    /// empty, say Connection: close and come last, and that nothing follows a response that closes the connection.
    /// </summary>
    /// <param name="sent">Every byte the server sent.</param>
    /// <param name="applicationMethods">The method of each request the application answered, in order (HEAD answers have no body).</param>
    public static List<Answer> Parse(ReadOnlySpan<byte> sent, IReadOnlyList<KnownMethod> applicationMethods)
    {
        var answers = new List<Answer>();
        int position = 0;
        int applicationAnswers = 0;
        while (position < sent.Length)
        {
            int headEnd = sent[position..].IndexOf("\r\n\r\n"u8);
            Require(headEnd >= 0, "a response head without its end");
            string[] lines = Encoding.Latin1.GetString(sent.Slice(position, headEnd)).Split("\r\n");
            position += headEnd + 4;

            int status = ParseStatusLine(lines[0]);
            var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
            for (int i = 1; i < lines.Length; i++)
            {
                int colon = lines[i].IndexOf(':', StringComparison.Ordinal);
                Require(colon > 0 && HttpCharacters.IsToken(Encoding.Latin1.GetBytes(lines[i][..colon])), $"a malformed header line '{lines[i]}'");
                Require(headers.TryAdd(lines[i][..colon], lines[i][(colon + 1)..].Trim()), $"a repeated header '{lines[i][..colon]}'");
            }

            if (status < 200)
            {
                Require(status == 100 && headers.Count == 0, $"an interim response other than a bare 100 Continue ({status})");
                continue;
            }

            bool close = headers.TryGetValue("Connection", out string? connection) && connection.Equals("close", StringComparison.OrdinalIgnoreCase);
            bool fromApplication = status == 200;
            bool bodiless = fromApplication && applicationAnswers < applicationMethods.Count && applicationMethods[applicationAnswers] == KnownMethod.Head;
            if (fromApplication)
            {
                applicationAnswers++;
            }
            else
            {
                // The server's own answer to a request it refused: nothing but the status, then the close.
                Require(status is >= 400 and < 600, $"an unexpected status {status}");
                Require(close, $"a {status} that keeps the connection open");
                Require(headers.TryGetValue("Content-Length", out string? length) && length == "0", $"a {status} with a body");
            }

            string body = bodiless ? string.Empty : ReadBody(sent, ref position, headers, close);
            answers.Add(new Answer(status, body));
            if (close)
            {
                Require(position == sent.Length, $"{sent.Length - position} bytes after a response that closes the connection");
            }
        }

        Require(applicationAnswers <= applicationMethods.Count, "more answers from the application than requests it was called for");
        return answers;
    }

    private static int ParseStatusLine(string line)
    {
        Require(line.Length >= 13 && line.StartsWith("HTTP/1.1 ", StringComparison.Ordinal) && line[12] == ' ', $"a malformed status line '{line}'");
        Require(int.TryParse(line.AsSpan(9, 3), NumberStyles.None, CultureInfo.InvariantCulture, out int status) && status >= 100, $"a malformed status '{line}'");
        return status;
    }

    private static string ReadBody(ReadOnlySpan<byte> sent, ref int position, Dictionary<string, string> headers, bool close)
    {
        if (headers.TryGetValue("Content-Length", out string? declared))
        {
            Require(!headers.ContainsKey("Transfer-Encoding"), "both Content-Length and Transfer-Encoding");
            Require(int.TryParse(declared, NumberStyles.None, CultureInfo.InvariantCulture, out int length), $"a malformed Content-Length '{declared}'");
            Require(sent.Length - position >= length, "a body shorter than its Content-Length");
            string body = Encoding.Latin1.GetString(sent.Slice(position, length));
            position += length;
            return body;
        }

        if (headers.TryGetValue("Transfer-Encoding", out string? coding))
        {
            Require(coding.Equals("chunked", StringComparison.OrdinalIgnoreCase), $"a transfer coding '{coding}'");
            return ReadChunked(sent, ref position);
        }

        // Close-delimited (HTTP/1.0 streaming): the rest of the stream.
        Require(close, "a body with no framing on a connection that stays open");
        string rest = Encoding.Latin1.GetString(sent[position..]);
        position = sent.Length;
        return rest;
    }

    private static string ReadChunked(ReadOnlySpan<byte> sent, ref int position)
    {
        var body = new StringBuilder();
        while (true)
        {
            int lineEnd = sent[position..].IndexOf("\r\n"u8);
            Require(lineEnd > 0, "a chunk size line without its end");
            string sizeText = Encoding.Latin1.GetString(sent.Slice(position, lineEnd));
            Require(int.TryParse(sizeText, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out int size), $"a malformed chunk size '{sizeText}'");
            position += lineEnd + 2;
            if (size == 0)
            {
                Require(sent[position..].StartsWith("\r\n"u8), "a last chunk without its empty line");
                position += 2;
                return body.ToString();
            }

            Require(sent.Length - position >= size + 2 && sent.Slice(position + size, 2).SequenceEqual("\r\n"u8), "a chunk shorter than its size");
            body.Append(Encoding.Latin1.GetString(sent.Slice(position, size)));
            position += size + 2;
        }
    }

    private static void Require(bool condition, string violation)
    {
        if (!condition)
        {
            throw new FuzzPropertyException("The server sent " + violation + ".");
        }
    }
}

/// <summary>A property of the server that an input broke; the message says which.</summary>
public sealed class FuzzPropertyException : Exception
{
    /// <summary>Creates the exception with what was broken.</summary>
    public FuzzPropertyException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with what was broken and the error behind it.</summary>
    public FuzzPropertyException(string message, Exception? innerException)
        : base(message, innerException)
    {
    }

    /// <summary>Creates the exception without a message.</summary>
    public FuzzPropertyException()
    {
    }
}
