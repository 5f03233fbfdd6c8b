using System;
using Falconet.Text;

namespace Falconet.Http.Http1;

public static partial class Http1Parser
{
    /// <summary>
    /// Walks the start of a request line in byte order and throws at the first byte after which no valid request line
    /// can follow. Incomplete lines use it to answer early, complete ones to report the same first error: the answer then
    /// never depends on where the bytes were split. It accepts every prefix of every valid line (a test walks them all).
    /// </summary>
    private struct RequestLineStartCheck
    {
        private Part _part;
        private int _length;

        private enum Part : byte
        {
            Method,
            Target,

            // A CR after target bytes: the end of a line without a version if LF follows, a bad target byte otherwise.
            TargetCarriageReturn,
            Version,
        }

        public void Scan(ReadOnlySpan<byte> span)
        {
            int i = 0;
            while (i < span.Length)
            {
                byte value = span[i];
                switch (_part)
                {
                    case Part.Method:
                        if (HttpCharacters.IsTokenChar(value))
                        {
                            if (++_length > MaxMethodLength)
                            {
                                BadHttpRequestException.Throw(RequestRejectionReason.MethodTooLong);
                            }
                        }
                        else if (value != (byte)' ' || _length == 0)
                        {
                            BadHttpRequestException.Throw(RequestRejectionReason.InvalidMethod);
                        }
                        else
                        {
                            _part = Part.Target;
                            _length = 0;
                        }

                        i++;
                        break;

                    case Part.Target:
                        int end = span[i..].IndexOfAnyExceptInRange((byte)0x21, (byte)0x7E);
                        if (end < 0)
                        {
                            _length += span.Length - i;
                            i = span.Length;
                            break;
                        }

                        _length += end;
                        i += end;
                        value = span[i];
                        if (value == (byte)' ' && _length > 0)
                        {
                            _part = Part.Version;
                            _length = 0;
                        }
                        else if (value == (byte)'\r' && _length > 0)
                        {
                            _part = Part.TargetCarriageReturn;
                        }
                        else
                        {
                            BadHttpRequestException.Throw(value == (byte)' '
                                ? RequestRejectionReason.ExtraSpaceBeforeTarget
                                : RequestRejectionReason.InvalidTargetCharacter);
                        }

                        i++;
                        break;

                    case Part.TargetCarriageReturn:
                        // Complete lines are scanned without their LF, and incomplete ones have none.
                        BadHttpRequestException.Throw(RequestRejectionReason.InvalidTargetCharacter);
                        break;

                    default:
                        if (!IsVersionByte(_length, value))
                        {
                            BadHttpRequestException.Throw(RequestRejectionReason.InvalidVersion);
                        }

                        _length++;
                        i++;
                        break;
                }
            }
        }

        /// <summary>True when <paramref name="value"/> can be byte <paramref name="index"/> of "HTTP/" DIGIT "." DIGIT CR.</summary>
        private static bool IsVersionByte(int index, byte value) => index switch
        {
            < 5 => value == "HTTP/"u8[index],
            5 or 7 => char.IsAsciiDigit((char)value),
            6 => value == (byte)'.',
            8 => value == (byte)'\r',

            // Past the CR with no LF: a bare CR.
            _ => false,
        };
    }
}
