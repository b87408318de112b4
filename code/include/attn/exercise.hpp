#pragma once
/// \file exercise.hpp
/// \brief What an exercise that is not done yet throws, in the student copy of the book.
///
/// The instructor's book fences the body of some functions with `// BEGIN SOLUTION NN.M`
/// and `// END SOLUTION`. `./book release` replaces each such region by a stub that throws
/// attn::exercise_not_done; a chapter program stops with one line naming the exercise (exit
/// code 3: the programs' harness, in code/harness, catches it), and a test that reaches a
/// stub fails with the same line. See the page \ref students.
/// \if instructor See also the page \ref instructors (in the instructor's site only). \endif

#include <exception>
#include <string>
#include <utility>

namespace attn {

/// \brief Thrown by the stub of exercise `id` until the student has written its code.
///
/// Deliberately not derived from std::invalid_argument or std::runtime_error: a test that
/// expects one of those for bad input must not pass because a stub threw.
class exercise_not_done : public std::exception {
 public:
  /// \param id        the exercise, e.g. `"03.1"`
  /// \param function  the function whose body is missing (a stub passes `__func__`)
  /// \param file      the file to edit, relative to the book's root
  /// \param unused    the stub's parameters, accepted and ignored so that a stub that
  ///                  does not use them still compiles without warnings
  template <typename... Unused>
  explicit exercise_not_done(std::string id, std::string function = {},
                             std::string file = {}, const Unused&... unused)
      : id_(std::move(id)), function_(std::move(function)), file_(std::move(file)) {
    (static_cast<void>(unused), ...);
    message_ = "exercise " + id_ + " is not done yet";
    if (!function_.empty()) message_ += ": write " + function_;
    if (!file_.empty()) message_ += " in " + file_;
  }

  /// \brief `exercise NN.M is not done yet: write FUNCTION in FILE`.
  const char* what() const noexcept override { return message_.c_str(); }
  /// \brief The exercise id, e.g. `"03.1"`.
  const std::string& id() const noexcept { return id_; }
  /// \brief The function whose body is a stub.
  const std::string& function() const noexcept { return function_; }
  /// \brief The file that holds it.
  const std::string& file() const noexcept { return file_; }

 private:
  std::string id_, function_, file_, message_;
};

}  // namespace attn
